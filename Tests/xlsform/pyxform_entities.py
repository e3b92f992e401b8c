"""Entity forms from pyxform's own tests (tests/entities/test_entities.py of pyxform 4.5.0, BSD licence, see
published/pyxform/LICENSE), in pyxform's markdown notation, for corpus.py.

Each case is (name, markdown, expectation, detail) as corpus.py's cases are. pyxform's tests write an entity's
label as a bare word (`E1`), which XPath reads as a path to an element of that name; here such a label is
`${q1}`, an expression FieldSheet translates. `{case}` in pyxform's parameterised tests is filled in.
"""


def sheets(markdown):
    """pyxform's markdown: a `| sheet |` line, then rows `| | cell | cell |`; an empty cell is None."""
    found = {}
    current = None
    for line in markdown.strip().splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0]:
            current = found.setdefault(cells[0], [])
        else:
            current.append([cell or None for cell in cells[1:]])
    return found


CREATE = """
| survey |
| | type | name | label |
| | text | q1   | Q1    |

| entities |
| | list_name | label |
| | e1        | ${q1} |
"""

CREATE_IF = """
| survey |
| | type | name | label |
| | text | q1   | Q1    |

| entities |
| | list_name | label | create_if  |
| | e1        | ${q1} | ${q1} = '' |
"""

UPDATE = """
| survey |
| | type         | name | label |
| | text         | q1   | Q1    |
| | csv-external | e1   |       |

| entities |
| | list_name | entity_id |
| | e1        | ${q1}     |
"""

UPDATE_WITH_LABEL = """
| survey |
| | type         | name | label |
| | text         | q1   | Q1    |
| | csv-external | e1   |       |

| entities |
| | list_name | entity_id | label |
| | e1        | ${q1}     | ${q1} |
"""

UPDATE_IF = """
| survey |
| | type         | name | label |
| | text         | q1   | Q1    |
| | csv-external | e1   |       |

| entities |
| | list_name | entity_id | update_if   |
| | e1        | ${q1}     | ${q1} != '' |
"""

UPSERT = """
| survey |
| | type         | name | label |
| | text         | q1   | Q1    |
| | csv-external | e1   |       |

| entities |
| | list_name | entity_id | update_if   | create_if   |
| | e1        | ${q1}     | ${q1} != '' | ${q1} != '' |
"""

SAVE_TO_CREATE = """
| survey |
| | type | name | label | save_to |
| | text | q1   | Q1    | e1p1    |

| entities |
| | list_name | label |
| | e1        | ${q1} |
"""

SAVE_TO_GROUP = """
| survey |
| | type        | name | label | save_to |
| | begin_group | g1   | G1    |         |
| | text        | q1   | Q1    | e1p1    |
| | end_group   | g1   |       |         |

| entities |
| | list_name | label |
| | e1        | ${q1} |
"""

SAVE_TO_UPDATE = """
| survey |
| | type         | name | label | save_to |
| | text         | q1   | Q1    | e1p1    |
| | csv-external | e1   |       |         |

| entities |
| | list_name | label | entity_id |
| | e1        | ${q1} | uuid()    |
"""

SELECT_NAMED_GROUP = """
| survey |
| | type             | name | label | save_to |
| | select_one group | q1   | Q1    | e1p1    |

| choices |
| | list_name | name | label |
| | group     | n1   | N1    |

| entities |
| | list_name | label |
| | e1        | ${q1} |
"""

UNEXPECTED_COLUMN = """
| survey |
| | type | name | label |
| | text | q1   | Q1    |

| entities |
| | list_name | label | what |
| | e1        | ${q1} | !    |
"""

UNRESOLVED_REFERENCE = """
| survey |
| | type | name | label |
| | text | q1   | Q1    |

| entities |
| | list_name | label |
| | e1        | ${q2} |
"""

NO_ENTITIES = """
| survey |
| | type | name | label | save_to |
| | text | q1   | Q1    | e1p1    |
"""

DUPLICATE_PROPERTY = """
| survey |
| | type | name | label | save_to |
| | text | q1   | Q1    | e1p1    |
| | text | q2   | Q2    | e1p1    |

| entities |
| | list_name | label |
| | e1        | ${q1} |
"""

SAVE_TO_ON_GROUP = """
| survey |
| | type        | name | label | save_to |
| | begin_group | g1   | G1    | e1p1    |
| | text        | q1   | Q1    |         |
| | end_group   |      |       |         |

| entities |
| | list_name | label |
| | e1        | ${q1} |
"""

CREATE_WITHOUT_LABEL = """
| survey |
| | type | name | label |
| | text | q1   | Q1    |

| entities |
| | list_name | create_if   |
| | e1        | ${q1} != '' |
"""

UPSERT_WITHOUT_UPDATE_IF = """
| survey |
| | type | name | label |
| | text | q1   | Q1    |

| entities |
| | list_name | create_if   | entity_id |
| | e1        | ${q1} != '' | ${q1}     |
"""

UPDATE_WITHOUT_ENTITY_ID = """
| survey |
| | type | name | label |
| | text | q1   | Q1    |

| entities |
| | list_name | update_if   |
| | e1        | ${q1} != '' |
"""

LIST_NAME = """
| survey |
| | type | name | label |
| | text | q1   | Q1    |

| entities |
| | list_name | label |
| | {case}    | ${q1} |
"""

RESERVED_PROPERTY = """
| survey |
| | type | name | label | save_to |
| | text | q1   | Q1    | name    |

| entities |
| | list_name | label |
| | e1        | ${q1} |
"""

DUPLICATE_DECLARATION = """
| survey |
| | type | name | label | save_to |
| | text | q1   | Q1    | e1#e1p1 |
| | text | q2   | Q2    | e2#e2p1 |

| entities |
| | list_name | label |
| | e1        | ${q1} |
| | e1        | ${q2} |
"""

SAVE_TO_IN_REPEAT = """
| survey |
| | type         | name | label | save_to |
| | begin_repeat | r1   | R1    |         |
| | text         | q1   | Q1    | e1p1    |
| | end_repeat   | r1   |       |         |

| entities |
| | list_name | label |
| | e1        | ${q1} |
"""

TWO_LISTS = """
| survey |
| | type | name | label | save_to |
| | text | q1   | Q1    | e1#e1p1 |
| | text | q2   | Q2    | e2#e2p1 |

| entities |
| | list_name | label |
| | e1        | ${q1} |
| | e2        | ${q2} |
"""


def cases():
    """(name, sheets, expectation, detail), as corpus.py's cases."""
    settings = [["form_title"], ["Entities"]]

    def case(name, markdown, expectation, detail=None, **fill):
        for key, value in fill.items():
            markdown = markdown.replace("{" + key + "}", value)
        found = sheets(markdown)
        found.setdefault("settings", settings)
        return (f"pyxform-entities-{name}", found, expectation, detail)

    return [
        case("create", CREATE, "same"),
        case("create-if", CREATE_IF, "same"),
        case("update", UPDATE, "same"),
        case("update-with-label", UPDATE_WITH_LABEL, "same"),
        case("update-if", UPDATE_IF, "same"),
        case("upsert", UPSERT, "same"),
        case("save-to-create", SAVE_TO_CREATE, "same"),
        case("save-to-group", SAVE_TO_GROUP, "same"),
        case("save-to-update", SAVE_TO_UPDATE, "same"),
        case("select-list-named-group", SELECT_NAMED_GROUP, "same"),
        case("unexpected-column", UNEXPECTED_COLUMN, "refused", "entities!C1"),
        case("unresolved-reference", UNRESOLVED_REFERENCE, "refused", "entities!B2"),
        case("save-to-without-entities", NO_ENTITIES, "refused", "survey!D2"),
        case("duplicate-property", DUPLICATE_PROPERTY, "refused", "survey!D3"),
        case("save-to-on-group", SAVE_TO_ON_GROUP, "refused", "survey!D2"),
        case("create-without-label", CREATE_WITHOUT_LABEL, "refused", "entities!A2"),
        case("upsert-without-update-if", UPSERT_WITHOUT_UPDATE_IF, "refused", "entities!B2"),
        case("update-without-entity-id", UPDATE_WITHOUT_ENTITY_ID, "refused", "entities!B2"),
        case("list-name-period", LIST_NAME, "refused", "entities!A2", case="e.1"),
        case("list-name-reserved-prefix", LIST_NAME, "refused", "entities!A2", case="__e1"),
        case("list-name-missing", LIST_NAME, "refused", "entities!A2", case=""),
        case("reserved-property", RESERVED_PROPERTY, "refused", "survey!D2"),
        case("duplicate-declaration", DUPLICATE_DECLARATION, "refused", "entities!A3"),
        case("save-to-in-repeat", SAVE_TO_IN_REPEAT, "fieldsheet-refuses",
             ("survey!D3", "an entity saved from a repeat (one per instance) is not supported yet")),
        case("two-lists", TWO_LISTS, "refused", "entities!A3"),
    ]
