import ArgumentParser

/// The `--set FIELD=VALUE` options of `fill`, `resume` and `edit`, read before ArgumentParser sees the
/// command line. ArgumentParser handles each repeated option in time that grows with the arguments before
/// it, so thousands of `--set`s took minutes; taken out first, they cost linear time however many there are.
enum AssignmentArguments {
    /// `arguments` without their `--set V` and `--set=V` options (up to a `--` terminator), and the values in order.
    static func extract(from arguments: [String]) -> (rest: [String], assignments: [String]) {
        var rest: [String] = []
        var assignments: [String] = []
        rest.reserveCapacity(arguments.count)
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                rest += arguments[index...]
                break
            }
            if argument == "--set", index + 1 < arguments.count {
                assignments.append(arguments[index + 1])
                index += 2
                continue
            }
            if argument.hasPrefix("--set=") {
                assignments.append(String(argument.dropFirst("--set=".count)))
            } else {
                rest.append(argument)
            }
            index += 1
        }
        return (rest, assignments)
    }

    /// Parses the command line like `parseAsRoot`, with `--set`s taken out first and handed to the command.
    static func parse(_ arguments: [String]) throws -> any ParsableCommand {
        let (rest, assignments) = extract(from: arguments)
        guard !assignments.isEmpty else { return try FieldSheetCommand.parseAsRoot(arguments) }
        let parsed = try FieldSheetCommand.parseAsRoot(rest)
        guard var command = parsed as? any TakesAssignments else {
            // --set where it does not belong: ArgumentParser says so as usual.
            return try FieldSheetCommand.parseAsRoot(arguments)
        }
        command.options.assignments = assignments
        try command.validate()
        return command
    }
}

/// A command with `FillOptions`, which take `--set`.
protocol TakesAssignments: ParsableCommand {
    var options: FillOptions { get set }
}

extension FieldSheetCommand.Fill: TakesAssignments {}
extension FieldSheetCommand.Resume: TakesAssignments {}
extension FieldSheetCommand.Edit: TakesAssignments {}
