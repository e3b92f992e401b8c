import FormModel

/// A question a sheet shows over itself, as drawn: a title, a message and buttons (one may be destructive).
public struct SheetDialog: Sendable, Hashable {
    public var title: String
    public var message: String
    public var choices: [String]
    /// The index of the destructive button, if any.
    public var destructive: Int?
}

extension SheetState {
    /// Whether a question is up (the discard confirmation or the removal of an instance).
    public var isAsking: Bool { confirmation != nil || removal != nil }

    /// The question up, as drawn.
    public var dialog: SheetDialog? {
        if let confirmation {
            return SheetDialog(title: confirmation.title, message: confirmation.message, choices: confirmation.choices.map(\.label),
                               destructive: confirmation.choices.firstIndex(where: \.isDestructive))
        }
        if let removal {
            return SheetDialog(title: removal.title, message: removal.message, choices: removal.choices, destructive: 0)
        }
        return nil
    }
}

/// Drawing the question and finding which of its buttons a click landed on.
extension SheetView {
    /// The question up (discard, or remove an instance): an action sheet at the bottom of the sheet, or an
    /// alert (centred) over a popover.
    mutating func drawConfirmation(_ dialog: SheetDialog, on screen: inout Screen) {
        let box = confirmationBox(dialog)
        let width = box.width
        screen.clear(box)
        screen.box(box)
        screen.write(dialog.title, column: box.x + 2, row: box.y + 1, style: .bold, limit: width - 4)
        let message = TextWrap.lines(dialog.message, width: width - 4)
        for (offset, line) in message.enumerated() {
            screen.write(line, column: box.x + 2, row: box.y + 2 + offset)
        }
        for (index, choice) in dialog.choices.enumerated() {
            var style: CellStyle = dialog.destructive == index ? [.destructive, .bold] : []
            if index == state.confirmationSelection { style.insert(.reverse) }
            let label = " \(choice) "
            let row = box.y + 3 + message.count + index
            screen.write(label, column: box.x + (width - label.count) / 2, row: row, style: style)
        }
    }

    /// The index of the question's button under a cell, if a question is up.
    public func dialogChoice(column: Int, row: Int) -> Int? {
        guard let dialog = state.dialog else { return nil }
        let box = confirmationBox(dialog)
        let messageLines = TextWrap.lines(dialog.message, width: box.width - 4).count
        let index = row - (box.y + 3 + messageLines)
        guard dialog.choices.indices.contains(index), column > box.x, column < box.maxX - 1 else { return nil }
        return index
    }

    /// The choice under a cell of the discard confirmation, if it is up.
    public func confirmationChoice(column: Int, row: Int) -> ConfirmationChoice? {
        guard let confirmation = state.confirmation, let index = dialogChoice(column: column, row: row) else { return nil }
        return confirmation.choices[index]
    }

    /// Where the question sits: an action sheet at the bottom of the sheet, an alert centred over a popover.
    func confirmationBox(_ dialog: SheetDialog) -> Rect {
        let rect = frame.rect
        let width = min(rect.width - 2, max(44, dialog.title.count + 4))
        let height = dialog.choices.count + 4 + TextWrap.lines(dialog.message, width: width - 4).count
        let isAlert = frame.arrow != nil
        // An action sheet rises from the bottom of the sheet, above its key hints; an alert is centred.
        let y = isAlert ? rect.y + max(1, (rect.height - height) / 2) : rect.maxY - height - 2
        return Rect(x: rect.x + (rect.width - width) / 2, y: max(rect.y, y), width: width, height: height)
    }
}
