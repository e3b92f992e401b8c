import Testing
@testable import FormModel

struct PresentationTests {
    @Test(arguments: [
        (PresentationStyle.automatic, SizeClass.regular, AdaptedStyle.formSheet),
        (.automatic, .compact, .fullScreen),
        (.formSheet, .regular, .formSheet),
        (.formSheet, .compact, .fullScreen),
        (.pageSheet, .regular, .pageSheet),
        (.pageSheet, .compact, .fullScreen),
        (.fullScreen, .regular, .fullScreen),
        (.fullScreen, .compact, .fullScreen),
        (.popover, .regular, .popover),
        (.popover, .compact, .sheet),
        (.currentContext, .regular, .currentContext),
        (.currentContext, .compact, .sheet),
    ])
    func eachStyleAdaptsToTheSizeClassAsTheTableSays(style: PresentationStyle, sizeClass: SizeClass, expected: AdaptedStyle) {
        #expect(ResolvedPresentation(style: style, sizeClass: sizeClass).style == expected)
    }

    @Test func terminalsNarrowerThanTheThresholdAreCompact() {
        #expect(SizeClass.forTerminal(columns: 80) == .compact)
        #expect(SizeClass.forTerminal(columns: 99) == .compact)
        #expect(SizeClass.forTerminal(columns: 100) == .regular)
        #expect(SizeClass.forTerminal(columns: 120) == .regular)
    }

    @Test func behaviourFollowsFromTheAdaptedStyle() {
        let sheet = ResolvedPresentation(style: .formSheet, sizeClass: .regular)
        #expect(sheet.dimsBackground && sheet.isModal && sheet.dismissesOnOutsideTap && !sheet.hasArrow)
        #expect(sheet.transition == .coverVertical)
        let popover = ResolvedPresentation(style: .popover, sizeClass: .regular)
        #expect(!popover.dimsBackground && !popover.isModal && popover.dismissesOnOutsideTap && popover.hasArrow)
        #expect(popover.transition == .crossDissolve)
        let compactPopover = ResolvedPresentation(style: .popover, sizeClass: .compact)
        #expect(compactPopover.isModal && compactPopover.transition == .coverVertical, "a popover shown as a sheet moves like one")
        let full = ResolvedPresentation(style: .fullScreen, sizeClass: .regular)
        #expect(full.coversEverything && !full.dismissesOnOutsideTap)
    }
}

struct PresentationStackTests {
    let filter = PresentedItem(id: "filter", kind: .popover)
    let note = PresentedItem(id: "note", kind: .popover)
    let job = PresentedItem(id: "job", kind: .modal(.formSheet))

    @Test func openingASecondPopoverClosesTheFirstAndSavesIt() throws {
        var stack = PresentationStack()
        _ = try stack.present(filter)
        let events = try stack.present(note)
        #expect(events == [.dismissed(filter, .anotherPopover), .presented(note)])
        #expect(stack.items == [note])
        #expect(DismissalTrigger.anotherPopover.keepsEverything)
    }

    @Test func aModalOpenedFromAPopoverClosesThePopoverFirst() throws {
        var stack = PresentationStack()
        _ = try stack.present(filter)
        let events = try stack.present(job)
        #expect(events == [.dismissed(filter, .modalFromPopover), .presented(job)])
        #expect(stack.items == [job])
    }

    @Test func onlyAnAlertAppearsOverAPopover() throws {
        var stack = PresentationStack()
        _ = try stack.present(filter)
        let alert = PresentedItem(id: "alert", kind: .alert)
        #expect(try stack.present(alert) == [.presented(alert)])
        #expect(stack.items == [filter, alert])
    }

    @Test func aConfirmationAskedFromAPopoverIsShownAsAnAlert() throws {
        var stack = PresentationStack()
        _ = try stack.present(filter)
        let events = try stack.present(PresentedItem(id: "confirm", kind: .actionSheet))
        #expect(events == [.presented(PresentedItem(id: "confirm", kind: .alert))])
        #expect(stack.items.first == filter)
    }

    @Test func nothingIsPresentedOverAnUnansweredAlert() throws {
        var stack = PresentationStack()
        _ = try stack.present(PresentedItem(id: "alert", kind: .alert))
        #expect(throws: PresentationRefusal.self) { try stack.present(job) }
    }

    @Test func aPopoverOverASheetIsAllowedAndSheetsStack() throws {
        var stack = PresentationStack()
        _ = try stack.present(job)
        _ = try stack.present(filter)
        #expect(stack.items == [job, filter])
        let inspection = PresentedItem(id: "inspection", kind: .modal(.fullScreen))
        let events = try stack.present(inspection)
        #expect(events == [.dismissed(filter, .modalFromPopover), .presented(inspection)])
        #expect(stack.items == [job, inspection])
    }

    @Test func tappingOutsideDismissesPopoversAndDimmedSheetsButNotFullScreen() throws {
        var stack = PresentationStack()
        _ = try stack.present(filter)
        #expect(stack.tapOutside() == [.dismissed(filter, .outsideTap)])
        _ = try stack.present(job)
        #expect(stack.tapOutside() == [.dismissed(job, .outsideTap)])
        let full = PresentedItem(id: "full", kind: .modal(.fullScreen))
        _ = try stack.present(full)
        #expect(stack.tapOutside().isEmpty)
        #expect(stack.items == [full])
    }
}
