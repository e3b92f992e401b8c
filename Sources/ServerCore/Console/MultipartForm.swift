import Foundation
import Hummingbird
import NIOCore

/// A posted `multipart/form-data` form (RFC 7578): the console's file uploads. Its parts by name, each with the
/// file name the browser gave (for a file) and its bytes.
struct MultipartForm: Sendable {
    struct Part: Sendable {
        var name: String
        var fileName: String?
        var data: Data
        var text: String { String(decoding: data, as: UTF8.self) }
    }

    var parts: [Part]

    /// The first part named `name`.
    func part(_ name: String) -> Part? { parts.first { $0.name == name } }

    /// The largest upload the console reads: a form's workbook may be 16 MiB (``WorkbookLimits``), with room
    /// for the form's other fields.
    static let maxBytes = 16 << 20 + 64 * 1024

    /// Whether the request's body is a multipart form.
    static func isMultipart(_ request: Request) -> Bool {
        request.headers[.contentType]?.lowercased().hasPrefix("multipart/form-data") == true
    }

    /// Reads a multipart body of at most ``maxBytes`` (the body stays readable for the next reader).
    static func read(_ request: inout Request) async throws -> MultipartForm {
        guard let type = request.headers[.contentType], let boundary = boundary(type) else {
            throw Problem.badRequest("The form was not sent as multipart/form-data with a boundary; reload the page and send it again.")
        }
        let tooLarge = Problem.tooLarge("The upload is larger than 16 MiB, the most a form's file may be. Remove sheets and pictures the form does not need.")
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBytes { throw tooLarge }
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maxBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
        guard let form = parse(Data(buffer.readableBytesView), boundary: boundary) else {
            throw Problem.badRequest("The uploaded form could not be read (its multipart body is damaged); reload the page and send it again.")
        }
        return form
    }

    /// The `boundary` parameter of a `multipart/form-data` content type.
    static func boundary(_ contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
            return value.isEmpty || value.count > 70 ? nil : value
        }
        return nil
    }

    /// The parts of `body`, or nil when it is not a multipart body with that boundary.
    static func parse(_ body: Data, boundary: String) -> MultipartForm? {
        let delimiter = Data("--\(boundary)".utf8)
        let crlf = Data("\r\n".utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        guard var start = body.range(of: delimiter)?.upperBound else { return nil }
        var parts: [Part] = []
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if body[start...].starts(with: Data("--".utf8)) { return MultipartForm(parts: parts) }
            guard body[start...].starts(with: crlf) else { return nil }
            let partStart = start + crlf.count
            guard let next = body.range(of: crlf + delimiter, in: partStart..<body.endIndex),
                  let headersEnd = body.range(of: headerEnd, in: partStart..<next.lowerBound)
            else { return nil }
            let headers = String(decoding: body[partStart..<headersEnd.lowerBound], as: UTF8.self)
            guard let disposition = headers.components(separatedBy: "\r\n").first(where: { $0.lowercased().hasPrefix("content-disposition:") }),
                  let name = parameter("name", in: disposition)
            else { return nil }
            parts.append(Part(name: name, fileName: parameter("filename", in: disposition), data: Data(body[headersEnd.upperBound..<next.lowerBound])))
            start = next.upperBound
        }
    }

    /// A quoted parameter of a `Content-Disposition` header (`name="file"`).
    static func parameter(_ name: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == name else { continue }
            var value = pair[1]
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.replacingOccurrences(of: "\\\"", with: "\"")
        }
        return nil
    }
}
