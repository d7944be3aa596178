import OpenRealm

/// CSV as export writes it and import reads it (RFC 4180: commas, CRLF or LF, quotes doubled
/// inside quoted fields), one class a file, a header row of property names (and `@key` first
/// for a class without a primary key).
///
/// A cell holds its property's JSON value (RecordEncoder.swift) as text: a value whose JSON
/// form is a string (String, Data, Date, Decimal128, ObjectId, UUID, a link by such a primary
/// key) raw, anything else as JSON text (numbers, true/false, lists, sets, maps and mixed
/// values). null is an empty unquoted cell, the empty string an empty quoted one (`""`).
enum CSV {
    /// One cell: its text, and whether it was quoted (an empty unquoted cell is null).
    struct Cell {
        var text: String
        var quoted: Bool
    }

    /// One row and the line it starts on (from 1).
    struct Row {
        var line: Int
        var cells: [Cell]
    }

    // MARK: Writing

    /// `value`, the JSON value of a property, as a cell.
    static func cell(_ value: JSONValue) -> String {
        switch value {
        case .null: return ""
        case .string(let text): return quoted(text)
        default: return quoted(value.text)
        }
    }

    /// `text` quoted when it must be: empty (else it reads as null), or holding a comma, a quote
    /// or a line break.
    static func quoted(_ text: String) -> String {
        guard text.isEmpty || text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func line(_ cells: [String]) -> String {
        cells.joined(separator: ",") + "\n"
    }

    // MARK: Reading

    struct SyntaxError: Error {
        var line: Int
        var message: String
    }

    /// The rows of `text`; blank lines are skipped.
    static func rows(_ text: String) throws(SyntaxError) -> [Row] {
        var rows: [Row] = []
        var cells: [Cell] = []
        var field = ""
        var quoted = false, inQuotes = false, afterQuote = false
        var line = 1, rowLine = 1
        var scalars = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar?
        func endField() {
            cells.append(Cell(text: field, quoted: quoted))
            field = ""
            quoted = false
            afterQuote = false
        }
        func endRow() {
            endField()
            if !(cells.count == 1 && cells[0].text.isEmpty && !cells[0].quoted) { rows.append(Row(line: rowLine, cells: cells)) }
            cells = []
        }
        while let scalar = pending ?? scalars.next() {
            pending = nil
            if inQuotes {
                if scalar == "\"" {
                    let next = scalars.next()
                    if next == "\"" {
                        field.unicodeScalars.append("\"")
                    } else {
                        inQuotes = false
                        afterQuote = true
                        pending = next
                    }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case ",":
                endField()
            case "\r":
                continue
            case "\n":
                endRow()
                line += 1
                rowLine = line
            case "\"" where field.isEmpty && !quoted:
                quoted = true
                inQuotes = true
            default:
                if afterQuote { throw SyntaxError(line: line, message: "text after the closing quote of a field") }
                if scalar == "\"" { throw SyntaxError(line: line, message: "a quote inside an unquoted field (quote the field and double the quote)") }
                field.unicodeScalars.append(scalar)
            }
        }
        if inQuotes { throw SyntaxError(line: rowLine, message: "a quoted field is not closed") }
        if !field.isEmpty || quoted || !cells.isEmpty { endRow() }
        return rows
    }

    /// The JSON value `cell` gives for `property` (the inverse of `cell(_:)`).
    static func value(_ cell: Cell, for property: PropertySchema, in classes: Schema) throws(RecordProblem) -> JSONValue {
        if !cell.quoted && cell.text.isEmpty { return .null }
        if property.isArray || property.isSet || property.isMap || property.type == .any { return try json(cell.text) }
        switch property.type {
        case .string, .data, .date, .decimal128, .objectId, .UUID:
            return .string(cell.text)
        case .object:
            let keyType = property.objectClassName.flatMap { classes[$0]?.primaryKeyProperty?.type }
            return keyType == nil || keyType == .int ? try json(cell.text) : .string(cell.text)
        case .float, .double:
            return ["NaN", "Infinity", "-Infinity"].contains(cell.text) ? .string(cell.text) : try json(cell.text)
        default:
            return try json(cell.text)
        }
    }

    private static func json(_ text: String) throws(RecordProblem) -> JSONValue {
        do {
            return try JSONValue.parse(text)
        } catch {
            throw RecordProblem(error.message)
        }
    }
}
