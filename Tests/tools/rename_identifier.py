#!/usr/bin/env python3
"""Renames a Swift identifier across the package's Swift sources, leaving the wire alone.

    python3 Tests/tools/rename_identifier.py recordId recordID [ROOT]

Every identifier that is OLD, or contains OLD as a camel-case word (`recordIds`, `recordIdsAsSent`,
`RecordIdCaseTests`, `theRecordIdIs…`), is renamed in code, in string interpolations and in DocC symbol
links (``Type/recordId``) of comments. String literals (JSON keys, SQL, messages) and other comment text are
left as they are. An enum case declaration it renames gets its old name as its raw value, so a CodingKeys
enum keeps its keys; types with a synthesized Codable conformance that hold a renamed stored property are
listed at the end: give them CodingKeys (the wire keys do not change with a Swift name).

Runs over Sources, Tests, Server, Client, Examples and Plugins (Tests/GeneratedClient is generated from
Schema/openapi.yaml and keeps its names): Swift files, the Swift snippets of DocC articles, and the tags of
the console's Mustache templates (which name the properties of Swift view models).
"""
import os
import re
import sys


def word_pattern(old):
    # Applied to one identifier: OLD at its start (either case of the first letter) or as a camel-case word
    # after a lowercase letter or digit, not followed by a lowercase letter, except a plural `s` ending the word.
    first, rest = re.escape(old[0].lower()), re.escape(old[1:])
    upper = re.escape(old[0].upper())
    return re.compile(r"(?:(?<![A-Za-z0-9_])[" + first + upper + r"]|(?<=[a-z0-9])" + upper + r")" + rest + r"(?=s?(?:[^a-z]|$))")


class Renamer:
    def __init__(self, old, new):
        self.old, self.new = old, new
        self.pattern = word_pattern(old)

    def ident(self, text):
        def replace(match):
            found = match.group(0)
            return (self.new[0].upper() if found[0].isupper() else self.new[0]) + self.new[1:]
        return self.pattern.sub(replace, text)

    def code(self, text):
        """Renames in a stretch of code (no comments, no strings)."""
        out = []
        for token in re.split(r"([A-Za-z_][A-Za-z0-9_]*)", text):
            out.append(self.ident(token) if re.match(r"[A-Za-z_]", token or " ") else token)
        return "".join(out)

    def comment(self, text):
        return re.sub(r"``[^`]+``", lambda m: self.code(m.group(0)), text)

    def swift(self, src):
        """Walks Swift source: code, comments, string literals (with interpolations), raw strings."""
        out = []
        i, n = 0, len(src)
        start = 0

        def flush(end):
            out.append(self.code(src[start:end]))

        while i < n:
            c = src[i]
            if src.startswith("//", i):
                flush(i)
                end = src.find("\n", i)
                end = n if end < 0 else end
                out.append(self.comment(src[i:end]))
                i = start = end
            elif src.startswith("/*", i):
                flush(i)
                depth, j = 0, i
                while j < n:
                    if src.startswith("/*", j):
                        depth += 1
                        j += 2
                    elif src.startswith("*/", j):
                        depth -= 1
                        j += 2
                        if depth == 0:
                            break
                    else:
                        j += 1
                out.append(self.comment(src[i:j]))
                i = start = j
            elif c == '"' or (c == "#" and re.match(r'#+"', src[i:])):
                flush(i)
                i = start = self.string(src, i, out)
            else:
                i += 1
        flush(n)
        return "".join(out)

    def string(self, src, i, out):
        """Copies the string literal at i (renaming inside interpolations); returns the index after it."""
        hashes = len(src[i:]) - len(src[i:].lstrip("#"))
        j = i + hashes
        multi = src.startswith('"""', j)
        quote = '"""' if multi else '"'
        j += len(quote)
        close = quote + "#" * hashes
        escape = "\\" + "#" * hashes
        literal_start = i
        while j < len(src):
            if src.startswith(escape + "(", j):
                out.append(src[literal_start:j + len(escape) + 1])
                j += len(escape) + 1
                depth, k = 1, j
                # The interpolation is code: find its closing parenthesis (strings inside are skipped).
                while k < len(src) and depth:
                    if src[k] == "(":
                        depth += 1
                    elif src[k] == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    elif src[k] == '"':
                        inner = []
                        k = self.string(src, k, inner) - 1
                    k += 1
                out.append(self.swift(src[j:k]))
                j = literal_start = k
            elif src.startswith(escape, j) and hashes == 0:
                j += 2
            elif src.startswith(close, j):
                j += len(close)
                out.append(src[literal_start:j])
                return j
            else:
                j += 1
        out.append(src[literal_start:])
        return len(src)


def enum_raw_values(src, renamer):
    """A renamed enum case keeps its old name as its raw value (CodingKeys keep their keys)."""
    def fix(match):
        indent, names = match.group(1), match.group(2)
        parts = []
        for name in names.split(","):
            name = name.strip()
            new = renamer.ident(name)
            parts.append(f'{new} = "{name}"' if new != name and "=" not in name else name)
        return f"{indent}case {', '.join(parts)}"
    entry = r'[a-z][A-Za-z0-9_]*(?: = "[^"]*")?'
    cases = r"case (" + entry + r"(?:, *" + entry + r")*)"
    src = re.sub(r"(?m)^(\s*)" + cases + r"[ \t]*$",
                 lambda m: fix(m) if renamer.pattern.search(m.group(2)) else m.group(0), src)
    # A one-line enum: `enum CodingKeys: String, CodingKey { case a, b }`.
    return re.sub(r"(?m)(\benum \w+: String\b[^{\n]*\{ *)" + cases + r"( *\})",
                  lambda m: m.group(1) + fix(m).lstrip()[len(m.group(1).lstrip()):] + m.group(3) if renamer.pattern.search(m.group(2)) else m.group(0), src)


def strip_nested_types(body):
    """The body without the structs and classes declared in it (its own CodingKeys enum stays)."""
    out, i = [], 0
    for m in re.finditer(r"\b(?:struct|class|extension) \w+[^{\n]*\{", body):
        if m.start() < i:
            continue
        out.append(body[i:m.start()])
        depth, j = 1, m.end()
        while j < len(body) and depth:
            depth += {"{": 1, "}": -1}.get(body[j], 0)
            j += 1
        i = j
    out.append(body[i:])
    return "".join(out)


def synthesized_codable(src, renamer, path):
    found = []
    # Codable, Encodable or Decodable, or a protocol refining them (Hummingbird's ResponseEncodable,
    # ResponseCodable), declared on the type or in an extension of it in the same file.
    coding = r"\b\w*(?:Codable|Encodable|Decodable)\b"
    extended = set(re.findall(r"extension (\w+)\s*:[^{\n]*" + coding, src))
    for m in re.finditer(r"(struct|class) (\w+)([^{\n]*)\{", src):
        if not re.search(coding, m.group(3)) and m.group(2) not in extended:
            continue
        depth, i = 1, m.end()
        while i < len(src) and depth:
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        body = strip_nested_types(src[m.end():i])
        if "CodingKey" in body:
            continue
        props = [p for p in re.findall(r"\b(?:var|let) ([a-z][A-Za-z0-9_]*)\s*:", body) if renamer.pattern.search(p)]
        if props:
            found.append(f"{path}: {m.group(2)} {props}")
    return found


def main():
    old, new = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else "."
    renamer = Renamer(old, new)
    warnings = []
    changed = 0
    for top in ["Sources", "Tests", "Server", "Client", "Examples", "Plugins"]:
        for directory, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [d for d in dirs if d not in (".build", "GeneratedClient")]
            for name in files:
                path = os.path.join(directory, name)
                if name.endswith(".swift"):
                    src = open(path, encoding="utf-8").read()
                    warnings += synthesized_codable(src, renamer, path)
                    result = renamer.swift(enum_raw_values(src, renamer))
                elif name.endswith(".mustache"):
                    # The console's templates name the properties of Swift view models.
                    src = open(path, encoding="utf-8").read()
                    result = re.sub(r"\{\{\{?[#^/&]?\s*[A-Za-z0-9_.]+\s*\}?\}\}", lambda m: renamer.code(m.group(0)), src)
                elif name.endswith(".md") and ".docc" in directory:
                    src = open(path, encoding="utf-8").read()
                    result = re.sub(r"(?s)(```swift\n)(.*?)(```)", lambda m: m.group(1) + renamer.swift(m.group(2)) + m.group(3), src)
                    result = renamer.comment(result)
                else:
                    continue
                if result != src:
                    open(path, "w", encoding="utf-8").write(result)
                    changed += 1
    print(f"{old} -> {new}: {changed} files changed")
    for warning in warnings:
        print("synthesized Codable with a renamed property (give it CodingKeys):", warning)


if __name__ == "__main__":
    main()
