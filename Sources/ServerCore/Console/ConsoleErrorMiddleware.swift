import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServerStorage

/// Turns every error of a console page into an HTML page with the same status the API would give.
///
/// Every 404 reads the same, whatever is missing: a record of another project, another collector's record
/// and one that never existed are indistinguishable.
struct ConsoleErrorMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    struct ErrorPage {
        var chrome: ConsoleChrome
        var heading: String
        var detail: String
    }

    static let notFoundDetail = "There is nothing at this address, or it is not yours to see. Check the link, or go back to the console and look for it there."

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPParserError {
            throw error  // the connection is broken: ProblemMiddleware answers and closes it
        } catch {
            return Self.page(for: Self.problem(for: error, context: context), context: context)
        }
    }

    static func problem(for error: any Error, context: Context) -> Problem {
        switch error {
        case let problem as Problem: return problem
        case let error as HTTPError: return ProblemMiddleware<Context>.problem(for: error)
        case is NIOTooManyBytesError: return Problem.tooLarge("The form sent is larger than the console accepts; shorten the comment.")
        default:
            if let problem = ProblemMiddleware<Context>.storageProblem(error, logger: context.logger) { return problem }
            context.logger.error("Console request failed", metadata: ["error.type": "\(String(reflecting: type(of: error)))"])
            return Problem.internalError
        }
    }

    static func page(for problem: Problem, context: Context) -> Response {
        let notFound = problem.status == .notFound
        let heading = notFound ? "Not found" : problem.title
        let page = ErrorPage(
            chrome: ConsoleChrome(title: heading, context: context), heading: heading,
            detail: notFound ? notFoundDetail : problem.detail)
        return ConsoleRenderer.page("error", page, status: problem.status, headers: problem.headers)
    }
}
