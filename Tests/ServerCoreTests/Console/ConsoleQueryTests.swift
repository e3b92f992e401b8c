@testable import ServerCore
import Testing

/// A console page's query string reads as a browser writes a GET form: `+` is a space, `%2B` a plus, in names
/// and values; a name without `=` has an empty value; the first value of a name wins.
struct ConsoleQueryTests {
    @Test func aQueryReadsAsABrowserWritesAGetForm() {
        let query = ConsoleQuery("author=Ana+Lima&q=a%2Bb&review=&flag&col=x&col=y&author=second&na%20me=v+w")
        #expect(query.get("author") == "Ana Lima")
        #expect(query.get("q") == "a+b")
        #expect(query.get("review") == "")
        #expect(query.get("flag") == "")
        #expect(query.getAll("col") == ["x", "y"])
        #expect(query.get("na me") == "v w")
        #expect(query.get("missing") == nil)
        #expect(ConsoleQuery(nil).items.isEmpty)
        #expect(ConsoleQuery("bad=%ZZ").get("bad") == "%ZZ", "text that is not percent-encoding is kept as typed")
    }

    @Test func theSubmissionsFiltersReadAnAuthorWithASpace() throws {
        let filter = try SubmissionsController.Filter(ConsoleQuery("author=Ana+Lima&review=approved"))
        #expect(filter.author == "Ana Lima")
        #expect(filter.review == .approved)
    }

    @Test func aValueTheConsoleEncodesForALinkReadsBackAsItself() {
        for text in ["a&b+c=d", "Ana Lima", "é #1 ?x", "100%"] {
            #expect(ConsoleQuery("actor=" + ConsoleLanguage.encoded(text) + "&before=5").get("actor") == text)
        }
    }
}
