import Testing
import TestSupport
@testable import OpenRealm

// Tests for PredicateParser: each operator and alias, constants, placeholders, key paths, lists,
// subqueries, precedence, malformed input (with the offset each error points at), and a seeded
// fuzz run that only checks the parser never traps.

@Suite struct PredicateParserTests {
    // MARK: Operators

    @Test(arguments: [
        ("==", ComparisonOperator.equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual),
        ("<", .less), ("<=", .lessOrEqual), ("=<", .lessOrEqual), (">", .greater),
        (">=", .greaterOrEqual), ("=>", .greaterOrEqual),
    ])
    func symbolicOperatorsAndTheirAliasesParse(spelling: String, op: ComparisonOperator) throws {
        #expect(try parse("age \(spelling) 5") == comparison(path(["age"], at: 0), op, .constant(.int(5)), at: 0))
        // Without spaces the operator still ends where the number begins.
        #expect(try parse("age\(spelling)5") == comparison(path(["age"], at: 0), op, .constant(.int(5)), at: 0))
    }

    @Test(arguments: [
        ("BEGINSWITH", ComparisonOperator.beginsWith), ("beginswith", .beginsWith), ("BeginsWith", .beginsWith),
        ("ENDSWITH", .endsWith), ("endsWith", .endsWith), ("CONTAINS", .contains), ("contains", .contains),
        ("LIKE", .like), ("like", .like),
    ])
    func wordOperatorsParseInAnyCase(spelling: String, op: ComparisonOperator) throws {
        let expected = comparison(path(["name"], at: 0), op, .constant(.string("J")), at: 0)
        #expect(try parse("name \(spelling) 'J'") == expected)
    }

    @Test(arguments: [
        ("[c]", StringOptions.caseInsensitive), ("[C]", .caseInsensitive), ("[d]", .diacriticInsensitive),
        ("[cd]", [.caseInsensitive, .diacriticInsensitive]), ("[dc]", [.caseInsensitive, .diacriticInsensitive]),
        ("[CD]", [.caseInsensitive, .diacriticInsensitive]),
    ] as [(String, StringOptions)])
    func modifiersBecomeStringOptions(modifier: String, options: StringOptions) throws {
        for op in ["==", "!=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE"] {
            let parsed = try onlyComparison("name \(op)\(modifier) 'x'")
            #expect(parsed.options == options, "\(op)\(modifier)")
        }
        #expect(try onlyComparison("name IN\(modifier) {'x'}").options == options)
    }

    @Test func comparisonsWithoutModifiersHaveNoOptions() throws {
        #expect(try onlyComparison("name CONTAINS 'x'").options == [])
    }

    @Test func eitherSideMayBeTheKeyPathAndSidesKeepTheirOrder() throws {
        #expect(try parse("5 < age") == comparison(.constant(.int(5)), .less, path(["age"], at: 4), at: 0))
        #expect(try parse("age == otherAge") == comparison(path(["age"], at: 0), .equal, path(["otherAge"], at: 7), at: 0))
    }

    // MARK: IN and BETWEEN

    @Test func inTakesAListLiteral() throws {
        let expected = comparison(path(["name"], at: 0), .in,
                                  .list([.constant(.string("Lisa")), .constant(.string("Spike")), .constant(.argument(0))], position: 8),
                                  at: 0)
        #expect(try parse("name IN {'Lisa', \"Spike\", %@}", "Hachi") == expected)
    }

    @Test func inTakesAnEmptyList() throws {
        #expect(try parse("age IN {}") == comparison(path(["age"], at: 0), .in, .list([], position: 7), at: 0))
        #expect(try parse("age in{ }") == comparison(path(["age"], at: 0), .in, .list([], position: 6), at: 0))
    }

    @Test func inTakesAnArgument() throws {
        #expect(try parse("age IN %@", [1, 2]) == comparison(path(["age"], at: 0), .in, .constant(.argument(0)), at: 0))
    }

    @Test func inTakesAKeyPathOnTheRight() throws {
        #expect(try parse("'x' IN names") == comparison(.constant(.string("x")), .in, path(["names"], at: 7), at: 0))
    }

    @Test func betweenTakesAListOfTwoOrAnArgument() throws {
        #expect(try parse("age BETWEEN {1, 5.5}") ==
                comparison(path(["age"], at: 0), .between, .list([.constant(.int(1)), .constant(.double(5.5))], position: 12), at: 0))
        #expect(try parse("age between %@", [42, 43]) ==
                comparison(path(["age"], at: 0), .between, .constant(.argument(0)), at: 0))
    }

    // MARK: Precedence

    @Test(arguments: [
        ("a == 1 OR b == 2 AND c == 3", "(a == 1 OR (b == 2 AND c == 3))"),
        ("a == 1 AND b == 2 OR c == 3", "((a == 1 AND b == 2) OR c == 3)"),
        ("a == 1 OR b == 2 OR c == 3", "((a == 1 OR b == 2) OR c == 3)"),
        ("a == 1 AND b == 2 AND c == 3", "((a == 1 AND b == 2) AND c == 3)"),
        ("(a == 1 OR b == 2) AND c == 3", "((a == 1 OR b == 2) AND c == 3)"),
        ("NOT a == 1 AND b == 2", "((NOT a == 1) AND b == 2)"),
        ("NOT (a == 1 AND b == 2)", "(NOT (a == 1 AND b == 2))"),
        ("!a == 1 || b == 2 && c == 3", "((NOT a == 1) OR (b == 2 AND c == 3))"),
        ("not not a == 1", "(NOT (NOT a == 1))"),
        ("!!a == 1", "(NOT (NOT a == 1))"),
        ("a == 1 and b == 2 Or c == 3", "((a == 1 AND b == 2) OR c == 3)"),
        ("((a == 1))", "a == 1"),
        ("a == 1 AND (b == 2 OR (c == 3 AND NOT d == 4))", "(a == 1 AND (b == 2 OR (c == 3 AND (NOT d == 4))))"),
        ("TRUEPREDICATE", "TRUEPREDICATE"),
        ("falsepredicate", "FALSEPREDICATE"),
        ("NOT TRUEPREDICATE OR (FALSEPREDICATE) AND a == 1", "((NOT TRUEPREDICATE) OR (FALSEPREDICATE AND a == 1))"),
    ])
    func precedenceIsNotThenAndThenOrAndBothAssociateLeft(format: String, shape: String) throws {
        #expect(render(try parse(format)) == shape)
    }

    @Test func nestedPredicatesKeepEveryPosition() throws {
        // 0         1         2
        // 0123456789012345678901234567890
        // a == 1 AND NOT (b < 2 OR c > 3)
        let expected: PredicateNode = .and(
            comparison(path(["a"], at: 0), .equal, .constant(.int(1)), at: 0),
            .not(.or(
                comparison(path(["b"], at: 16), .less, .constant(.int(2)), at: 16),
                comparison(path(["c"], at: 25), .greater, .constant(.int(3)), at: 25))))
        #expect(try parse("a == 1 AND NOT (b < 2 OR c > 3)") == expected)
    }

    @Test func truePredicateAndFalsePredicateAreConstants() throws {
        #expect(try parse("TRUEPREDICATE") == .constant(true))
        #expect(try parse(" FalsePredicate ") == .constant(false))
    }

    // MARK: Constants

    @Test(arguments: [
        ("nil", QueryConstant.null), ("NULL", .null), ("Nil", .null),
        ("true", .bool(true)), ("TRUE", .bool(true)), ("YES", .bool(true)), ("yes", .bool(true)),
        ("false", .bool(false)), ("FALSE", .bool(false)), ("NO", .bool(false)),
        ("42", .int(42)), ("-7", .int(-7)), ("+7", .int(7)), ("007", .int(7)), ("0", .int(0)),
        ("0x1F", .int(31)), ("0XfF", .int(255)), ("-0x10", .int(-16)),
        ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
        ("0x7FFFFFFFFFFFFFFF", .int(.max)), ("-0x8000000000000000", .int(.min)),
        ("1.5", .double(1.5)), ("-0.25", .double(-0.25)), ("1e3", .double(1000)), ("1.5E-3", .double(0.0015)),
        ("2e+2", .double(200)), ("-1E2", .double(-100)), ("+1.5", .double(1.5)), ("0.0", .double(0)),
        ("'abc'", .string("abc")), ("\"abc\"", .string("abc")), ("''", .string("")),
        ("'say \"hi\"'", .string("say \"hi\"")), ("\"it's\"", .string("it's")),
        (#"'a\'b'"#, .string("a'b")), (#""a\"b""#, .string("a\"b")), (#"'a\\b'"#, .string("a\\b")),
        (#"'\n\t\r\0'"#, .string("\n\t\r\0")), (#"'\u{1F600}'"#, .string("😀")), (#"'\u00E9t\u00e9'"#, .string("été")),
        (#"'\uD83D\uDE00'"#, .string("😀")), (#"'\u{41}\u{0042}'"#, .string("AB")),
        ("'héllo wörld ✓'", .string("héllo wörld ✓")), ("'two\nlines'", .string("two\nlines")),
    ])
    func constantsOfEveryKindParse(written: String, value: QueryConstant) throws {
        #expect(try parse("x == \(written)") == comparison(path(["x"], at: 0), .equal, .constant(value), at: 0))
    }

    @Test func numbersFollowOperatorsWithoutSpaces() throws {
        #expect(try parse("age>-5") == comparison(path(["age"], at: 0), .greater, .constant(.int(-5)), at: 0))
        #expect(try parse("age=-5") == comparison(path(["age"], at: 0), .equal, .constant(.int(-5)), at: 0))
    }

    // MARK: Placeholders

    @Test func argumentsAreNumberedInTheOrderWritten() throws {
        let expected: PredicateNode = .and(
            comparison(path(["a"], at: 0), .equal, .constant(.argument(0)), at: 0),
            comparison(.constant(.argument(1)), .less, path(["b"], at: 17), at: 12))
        #expect(try parse("a == %@ AND %@ < b", 1, 2) == expected)
    }

    @Test func printfStyleSpecifiersActAsArguments() throws {
        let shape = render(try parse("a == %d AND b == %s OR c == %lld AND d == %f", 1, "x", 2, 3.5))
        #expect(shape == "((a == %@0 AND b == %@1) OR (c == %@2 AND d == %@3))")
    }

    @Test func extraArgumentsAreIgnored() throws {
        #expect(try parse("a == %@", 1, 2, 3) == comparison(path(["a"], at: 0), .equal, .constant(.argument(0)), at: 0))
    }

    @Test func keyPathArgumentsExpandAndCountAsArguments() throws {
        #expect(try parse("%K == %@", "name", "Rex") ==
                comparison(path(["name"], at: 0), .equal, .constant(.argument(1)), at: 0))
        #expect(try parse("%K > 3", "dog.age") == comparison(path(["dog", "age"], at: 0), .greater, .constant(.int(3)), at: 0))
        #expect(try parse("5 < %K", "owner.dog.age") ==
                comparison(.constant(.int(5)), .less, path(["owner", "dog", "age"], at: 4), at: 0))
    }

    @Test func keyPathArgumentsMayHoldAggregates() throws {
        #expect(try parse("%K > 5", "employees.@count") ==
                comparison(path(["employees"], at: 0, aggregate: .count), .greater, .constant(.int(5)), at: 0))
        #expect(try parse("%K > 5", "items.@sum.price") ==
                comparison(path(["items"], at: 0, aggregate: .sum, property: ["price"]), .greater, .constant(.int(5)), at: 0))
    }

    @Test func keyPathArgumentsCombineWithWrittenParts() throws {
        #expect(try parse("ANY %K.name == 'x'", "owner.dogs") ==
                comparison(path(["owner", "dogs", "name"], at: 4, quantifier: .any), .equal, .constant(.string("x")), at: 0))
        #expect(try parse("%K.@count > 1", "dogs") ==
                comparison(path(["dogs"], at: 0, aggregate: .count), .greater, .constant(.int(1)), at: 0))
    }

    // MARK: Key paths

    @Test func dottedKeyPathsSplitIntoComponents() throws {
        #expect(try parse("owner.address.country == 'NZ'") ==
                comparison(path(["owner", "address", "country"], at: 0), .equal, .constant(.string("NZ")), at: 0))
    }

    @Test func nonASCIINamesAreKeyPathsAndPositionsCountBytes() throws {
        // "prénom" is 7 bytes, so '==' starts at 8 and the string at 11.
        #expect(try parse("prénom == 'Zoé'") == comparison(path(["prénom"], at: 0), .equal, .constant(.string("Zoé")), at: 0))
        #expect(try parse("名前 == 'x' AND _id2 > 1") == .and(
            comparison(path(["名前"], at: 0), .equal, .constant(.string("x")), at: 0),
            comparison(path(["_id2"], at: 18), .greater, .constant(.int(1)), at: 18)))
    }

    @Test func keywordsAfterADotAreOrdinaryNames() throws {
        #expect(try parse("owner.any == 1") == comparison(path(["owner", "any"], at: 0), .equal, .constant(.int(1)), at: 0))
    }

    @Test(arguments: [("ANY", Quantifier.any), ("any", .any), ("SOME", .any), ("ALL", .all), ("all", .all), ("NONE", .none)])
    func quantifiersPrecedeTheKeyPath(spelling: String, quantifier: Quantifier) throws {
        let pathStart = spelling.utf8.count + 1
        #expect(try parse("\(spelling) dogs.age < 2") ==
                comparison(path(["dogs", "age"], at: pathStart, quantifier: quantifier), .less, .constant(.int(2)), at: 0))
    }

    @Test func quantifiersMayStandOnTheRightSide() throws {
        #expect(try parse("2 > ANY dogs.age") ==
                comparison(.constant(.int(2)), .greater, path(["dogs", "age"], at: 8, quantifier: .any), at: 0))
    }

    @Test(arguments: [
        ("employees.@count", ["employees"], Aggregate.count, [String]()),
        ("employees.@COUNT", ["employees"], .count, []),
        ("items.@sum.price", ["items"], .sum, ["price"]),
        ("scores.@avg", ["scores"], .avg, []),
        ("owner.items.@Min.price.amount", ["owner", "items"], .min, ["price", "amount"]),
        ("items.@max.price", ["items"], .max, ["price"]),
    ])
    func aggregatesSplitTheKeyPath(written: String, components: [String], aggregate: Aggregate, property: [String]) throws {
        #expect(try parse("\(written) > 5") ==
                comparison(path(components, at: 0, aggregate: aggregate, property: property), .greater, .constant(.int(5)), at: 0))
    }

    // MARK: Subqueries

    @Test func subqueryCountParsesWithItsInnerPredicate() throws {
        //          1         2         3         4         5         6         7
        // 0123456789012345678901234567890123456789012345678901234567890123456789012345
        // SUBQUERY(employees, $e, $e.age > 30 AND $e.name BEGINSWITH 'J').@count > 2
        let format = "SUBQUERY(employees, $e, $e.age > 30 AND $e.name BEGINSWITH 'J').@count > 2"
        let inner: PredicateNode = .and(
            comparison(path(["$e", "age"], at: 24), .greater, .constant(.int(30)), at: 24),
            comparison(path(["$e", "name"], at: 40), .beginsWith, .constant(.string("J")), at: 40))
        let subquery = QueryExpression.subqueryCount(
            collection: KeyPathExpression(quantifier: nil, components: ["employees"], aggregate: nil, position: 9),
            variable: "$e", predicate: inner, position: 0)
        #expect(try parse(format) == comparison(subquery, .greater, .constant(.int(2)), at: 0))
    }

    @Test func subqueryMayStandOnTheRightAndInAnyCase() throws {
        let parsed = try onlyComparison("2 < subquery(dogs, $d, $d.age > %@).@Count", 3)
        guard case .subqueryCount(let collection, let variable, let predicate, let position) = parsed.right else {
            Issue.record("expected a subquery on the right, got \(parsed.right)")
            return
        }
        #expect(collection.components == ["dogs"])
        #expect(variable == "$d")
        #expect(render(predicate) == "$d.age > %@0")
        #expect(position == 4)
    }

    @Test func subqueriesNest() throws {
        let format = "SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c == 1).@count > 0).@count == 0"
        #expect(render(try parse(format)) == "SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c == 1) > 0) == 0")
    }

    // MARK: Whitespace

    @Test func whitespaceOfAnyKindSeparatesTokens() throws {
        #expect(render(try parse("\t age\n>\r\n5\u{00A0}AND(b==1 )  ")) == "(age > 5 AND b == 1)")
    }

    // MARK: Malformed input

    @Test(arguments: [
        MalformedPredicate("", at: 0, "expected a predicate but found end of input"),
        MalformedPredicate("age >", at: 5, "expected a value after '>' but found end of input"),
        MalformedPredicate("age < ", at: 6, "expected a value after '<' but found end of input"),
        MalformedPredicate("name == 'abc", at: 8, "unterminated string starting at offset 8"),
        MalformedPredicate("name == \"abc\\\"", at: 8, "unterminated string"),
        MalformedPredicate("age > 5 foo", at: 8, "'foo'"),
        MalformedPredicate("age 5", at: 4, "comparison operator"),
        MalformedPredicate("age", at: 3, "comparison operator"),
        MalformedPredicate("5 == 6", at: 0, "at least one side of a comparison must be a key path"),
        MalformedPredicate("'x' IN {'a'}", at: 0, "at least one side"),
        MalformedPredicate("(age > 5", at: 8, "')'"),
        MalformedPredicate("age > 5)", at: 7, "AND, OR"),
        MalformedPredicate("((((", at: 4, "predicate"),
        MalformedPredicate("age > 5 AND", at: 11, "predicate"),
        MalformedPredicate("age > 5 AND OR b == 1", at: 12, "'OR'"),
        MalformedPredicate("AND", at: 0, "predicate"),
        MalformedPredicate("NOT", at: 3, "end of input"),
        MalformedPredicate("in == 5", at: 0, "'in'"),
        MalformedPredicate("age > AND", at: 6, "value"),
        MalformedPredicate("age > 5 [c]", at: 8, "AND, OR"),
        MalformedPredicate("TRUEPREDICATE == 1", at: 14, "AND, OR"),
        // Modifiers
        MalformedPredicate("name CONTAINS[x] 'a'", at: 14, "unknown modifier letter 'x'"),
        MalformedPredicate("name CONTAINS[cx] 'a'", at: 15, "modifier"),
        MalformedPredicate("name CONTAINS[] 'a'", at: 13, "empty modifier"),
        MalformedPredicate("name CONTAINS[c 'a'", at: 15, "']'"),
        MalformedPredicate("name CONTAINS[c", at: 15, "']'"),
        MalformedPredicate("age <[c] 5", at: 5, "modifier"),
        MalformedPredicate("age BETWEEN[c] {1, 2}", at: 11, "modifier"),
        MalformedPredicate("name[c] == 'a'", at: 4, "comparison operator"),
        // Lists, IN and BETWEEN
        MalformedPredicate("age BETWEEN {1, 2, 3}", at: 12, "exactly two"),
        MalformedPredicate("age BETWEEN {1}", at: 12, "exactly two"),
        MalformedPredicate("age BETWEEN {}", at: 12, "exactly two"),
        MalformedPredicate("age BETWEEN 5", at: 12, "BETWEEN"),
        MalformedPredicate("age BETWEEN other", at: 12, "BETWEEN"),
        MalformedPredicate("name IN 'abc'", at: 8, "but found the string 'abc'"),
        MalformedPredicate("age IN SUBQUERY(a, $x, $x.b == 1).@count", at: 7, "list"),
        MalformedPredicate("age == {1, 2}", at: 7, "can only follow IN or BETWEEN"),
        MalformedPredicate("{1} IN age", at: 0, "can only follow IN or BETWEEN"),
        MalformedPredicate("age IN {1, 2", at: 12, "',' or '}'"),
        MalformedPredicate("age IN {1,}", at: 10, "value"),
        MalformedPredicate("age IN {1 2}", at: 10, "',' or '}'"),
        MalformedPredicate("age IN {age}", at: 8, "value"),
        MalformedPredicate("age IN {{1}}", at: 8, "value"),
        // Numbers
        MalformedPredicate("age > 99999999999999999999", at: 6, "out of range"),
        MalformedPredicate("age > 9223372036854775808", at: 6, "out of range"),
        MalformedPredicate("age > -9223372036854775809", at: 6, "out of range"),
        MalformedPredicate("age > 0x8000000000000000", at: 6, "out of range"),
        MalformedPredicate("age > 0x", at: 6, "hexadecimal"),
        MalformedPredicate("age > 5abc", at: 6, "malformed number '5abc'"),
        MalformedPredicate("age > 1e", at: 6, "malformed number"),
        MalformedPredicate("age > 0x1G", at: 6, "malformed number"),
        MalformedPredicate("age > 1e999", at: 6, "out of range"),
        MalformedPredicate("age > -", at: 6, "unexpected character '-'"),
        MalformedPredicate("age > 5.5.5", at: 9, "AND, OR"),
        // Strings
        MalformedPredicate(#"name == 'a\q'"#, at: 10, "unknown escape"),
        MalformedPredicate(#"name == '\u{110000}'"#, at: 9, "not a valid character"),
        MalformedPredicate(#"name == '\uD800'"#, at: 9, "not a valid character"),
        MalformedPredicate(#"name == '\u12'"#, at: 9, "four hexadecimal digits"),
        MalformedPredicate(#"name == '\u{}'"#, at: 9, "unicode escape"),
        MalformedPredicate(#"name == '\u{123456789}'"#, at: 9, "unicode escape"),
        MalformedPredicate(#"name == 'abc\"#, at: 8, "unterminated string"),
        // Placeholders and stray characters
        MalformedPredicate("age > %", at: 6, "lone '%'"),
        MalformedPredicate("age > % 5", at: 6, "lone '%'"),
        MalformedPredicate("age > %y", at: 6, "unknown format specifier '%y'"),
        MalformedPredicate("age > ~", at: 6, "unexpected character '~'"),
        MalformedPredicate("age > 😀", at: 6, "unexpected character '😀'"),
        MalformedPredicate("age & 5", at: 4, "'&&'"),
        MalformedPredicate("age > 5 | b == 1", at: 8, "'||'"),
        MalformedPredicate("é > 1 AND ü ~ 2", at: 14, "unexpected character"),
        // Key paths
        MalformedPredicate("ANY 5 == x", at: 4, "key path after 'ANY'"),
        MalformedPredicate("ANY == 5", at: 4, "key path after 'ANY'"),
        MalformedPredicate("ALL nil == x", at: 4, "key path after 'ALL'"),
        MalformedPredicate("@count > 5", at: 0, "cannot start with an aggregate"),
        MalformedPredicate("employees.@foo > 5", at: 10, "unknown aggregate '@foo'"),
        MalformedPredicate("items.@sum.@count > 5", at: 11, "only property names may follow '@sum'"),
        MalformedPredicate("dogs.$x > 5", at: 5, "variable"),
        MalformedPredicate("dogs. > 5", at: 6, "property name after '.'"),
        MalformedPredicate("dogs.5 > 5", at: 5, "property name"),
        MalformedPredicate("dogs.@ > 5", at: 6, "aggregate name"),
        MalformedPredicate("$ > 5", at: 1, "variable name"),
        MalformedPredicate("$1 > 5", at: 1, "variable name"),
        // Subqueries
        MalformedPredicate("SUBQUERY(items, $x, $x.price > 5) > 1", at: 34, "'.@count'"),
        MalformedPredicate("SUBQUERY(items, $x, $x.price > 5).@sum > 1", at: 34, "only @count can follow a SUBQUERY"),
        MalformedPredicate("SUBQUERY(items, $x, $x.price > 5).price > 1", at: 34, "'@count'"),
        MalformedPredicate("SUBQUERY(items, x, x.price > 5).@count > 1", at: 16, "'$'"),
        MalformedPredicate("SUBQUERY(items $x, $x.price > 5).@count > 1", at: 15, "','"),
        MalformedPredicate("SUBQUERY(items, $x $x.price > 5).@count > 1", at: 19, "','"),
        MalformedPredicate("SUBQUERY(items, $x, $x.price > 5.@count > 1", at: 32, "')'"),
        MalformedPredicate("SUBQUERY(items, $x, $x.price > 5", at: 32, "')'"),
        MalformedPredicate("SUBQUERY items", at: 9, "'('"),
        MalformedPredicate("SUBQUERY(5, $x, $x.a == 1).@count > 1", at: 9, "collection"),
        MalformedPredicate("SUBQUERY(items, $x, $x.a == 1).@count == %@", at: 41, "argument 0"),
    ])
    func malformedPredicatesThrowAtTheRightOffset(_ example: MalformedPredicate) {
        expectFailure(example.format, at: example.position, mentioning: example.word)
    }

    @Test func missingArgumentsAreReported() {
        expectFailure("age > %@", at: 6, mentioning: "%@ refers to argument 0 but no arguments were given")
        expectFailure("a > %@ AND b > %@", [1], at: 15, mentioning: "%@ refers to argument 1 but only 1 argument was given")
        expectFailure("a == %@ AND b == %@ OR c == %@", [1, 2], at: 28,
                      mentioning: "%@ refers to argument 2 but only 2 arguments were given")
        expectFailure("a == %d", at: 5, mentioning: "%d refers to argument 0")
        expectFailure("a IN {1, %@}", at: 9, mentioning: "%@ refers to argument 0")
        expectFailure("%K > 5", at: 0, mentioning: "%K refers to argument 0 but no arguments were given")
    }

    @Test func keyPathArgumentsMustBeStringsHoldingKeyPaths() {
        expectFailure("%K > 5", [5], at: 0, mentioning: "%K argument 0 is not a String")
        expectFailure("a == 1 AND %K > 5", [Substring("x")], at: 11, mentioning: "%K argument 0 is not a String")
        for bad in ["dog age", "dogs..age", "", "dogs.", "5dogs", "dogs.@", "dog-age"] {
            expectFailure("%K > 5", [bad], at: 0, mentioning: "not a key path")
        }
        expectFailure("a == %@ AND %K > 5", [1, "@count"], at: 12, mentioning: "cannot start with an aggregate")
        expectFailure("%K > 5", ["items.@sum.@max"], at: 0, mentioning: "only property names may follow")
        expectFailure("%K > 5", ["items.@median"], at: 0, mentioning: "unknown aggregate")
        expectFailure("%K > 5", ["a.$x"], at: 0, mentioning: "variable")
    }

    @Test func nestingIsCappedInsteadOfExhaustingTheStack() throws {
        let allowed = String(repeating: "(", count: 100) + "a == 1" + String(repeating: ")", count: 100)
        #expect(render(try parse(allowed)) == "a == 1")
        let tooDeep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        expectFailure(tooDeep, at: 100, mentioning: "nest")
        let nots = String(repeating: "NOT ", count: 5_000) + "a == 1"
        // The innermost NOT is applied first; the 1000th one applied (the 4000th written) is one too many.
        expectFailure(nots, at: 4 * 4_000, mentioning: "nested too deeply")
    }

    @Test func longChainsParseUpToTheDepthLimit() throws {
        let longest = Array(repeating: "a == 1", count: PredicateParser.maximumDepth).joined(separator: " OR ")
        guard case .or = try parse(longest) else {
            Issue.record("expected an OR chain")
            return
        }
        let tooLong = longest + " OR a == 1"
        expectFailure(tooLong, at: tooLong.utf8.count - 9, mentioning: "IN {")
    }

    // MARK: Fuzzing

    @Test func randomTokenSoupNeverTraps() {
        var random = SeededRandom(seed: 0x5EED_0F_0A11)
        let arguments: [Any] = ["dogs.age", 5, "items.@sum.price", [1, 2], 3.5, "x"]
        for _ in 0..<6_000 {
            var format = ""
            for _ in 0..<Int.random(in: 1...14, using: &random) {
                format += fuzzTokens.randomElement(using: &random)!
                format += ["", " ", " ", "\t", "\n"].randomElement(using: &random)!
            }
            expectParsesOrThrows(format, arguments)
        }
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                // Mostly printable ASCII, sometimes anything (decoding repairs invalid UTF-8).
                Bool.random(using: &random) ? UInt8.random(in: 0x20...0x7E, using: &random) : UInt8.random(in: 0...0xFF, using: &random)
            }
            expectParsesOrThrows(String(decoding: bytes, as: UTF8.self), arguments)
        }
    }

    @Test func everyPrefixAndSmallMutationOfValidPredicatesParsesOrThrows() throws {
        var random = SeededRandom(seed: 42)
        let arguments: [Any] = ["dogs.age", 5, "name", [1, 2], 3]
        for valid in validPredicates {
            _ = try PredicateParser.parse(valid, arguments: arguments)
            let bytes = Array(valid.utf8)
            for length in 0...bytes.count {
                expectParsesOrThrows(String(decoding: bytes[..<length], as: UTF8.self), arguments)
            }
            for _ in 0..<200 {
                var mutated = bytes
                let index = Int.random(in: 0..<mutated.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: mutated.remove(at: index)
                case 1: mutated.insert(mutated[Int.random(in: 0..<mutated.count, using: &random)], at: index)
                default: mutated[index] = UInt8.random(in: 0x20...0x7E, using: &random)
                }
                expectParsesOrThrows(String(decoding: mutated, as: UTF8.self), arguments)
            }
        }
    }
}

// MARK: - Helpers

private func parse(_ format: String, _ arguments: Any...) throws(QueryError) -> PredicateNode {
    try PredicateParser.parse(format, arguments: arguments)
}

private struct NotAComparison: Error {}

/// The comparison a one-comparison predicate consists of.
private func onlyComparison(_ format: String, _ arguments: Any...) throws -> Comparison {
    guard case .comparison(let comparison) = try PredicateParser.parse(format, arguments: arguments) else {
        throw NotAComparison()
    }
    return comparison
}

private func path(_ components: [String], at position: Int, quantifier: Quantifier? = nil,
                  aggregate: Aggregate? = nil, property: [String] = []) -> QueryExpression {
    .keyPath(KeyPathExpression(quantifier: quantifier, components: components, aggregate: aggregate,
                               aggregateProperty: property, position: position))
}

private func comparison(_ left: QueryExpression, _ op: ComparisonOperator, _ right: QueryExpression,
                        options: StringOptions = [], at position: Int) -> PredicateNode {
    .comparison(Comparison(left: left, op: op, right: right, options: options, position: position))
}

/// A malformed predicate, where its error should point, and a phrase the reason should contain.
struct MalformedPredicate: Sendable, CustomTestStringConvertible {
    var format: String
    var position: Int
    var word: String
    init(_ format: String, at position: Int, _ word: String) {
        (self.format, self.position, self.word) = (format, position, word)
    }
    var testDescription: String { "\"\(format)\"" }
}

private func expectFailure(_ format: String, _ arguments: [Any] = [], at position: Int?, mentioning phrase: String,
                           sourceLocation: SourceLocation = #_sourceLocation) {
    do throws(QueryError) {
        let tree = try PredicateParser.parse(format, arguments: arguments)
        Issue.record("\"\(format)\" parsed as \(tree) but should have failed", sourceLocation: sourceLocation)
    } catch {
        #expect(error.position == position, "\"\(format.prefix(80))\": \(error.reason)", sourceLocation: sourceLocation)
        #expect(error.reason.contains(phrase), "\"\(format.prefix(80))\": \(error.reason)", sourceLocation: sourceLocation)
    }
}

/// Parsing either succeeds or throws a `QueryError` pointing inside the string; the point of the
/// callers is that it never traps.
private func expectParsesOrThrows(_ format: String, _ arguments: [Any]) {
    do throws(QueryError) {
        _ = try PredicateParser.parse(format, arguments: arguments)
    } catch {
        let position = error.position ?? 0
        #expect((0...format.utf8.count).contains(position), "\"\(format)\": \(error)")
        #expect(!error.reason.isEmpty)
    }
}

/// The tree without positions, as text, for tests about its shape.
private func render(_ node: PredicateNode) -> String {
    switch node {
    case .constant(let value): value ? "TRUEPREDICATE" : "FALSEPREDICATE"
    case .and(let left, let right): "(\(render(left)) AND \(render(right)))"
    case .or(let left, let right): "(\(render(left)) OR \(render(right)))"
    case .not(let inner): "(NOT \(render(inner)))"
    case .comparison(let c): "\(render(c.left)) \(c.op.rawValue) \(render(c.right))"
    }
}

private func render(_ expression: QueryExpression) -> String {
    switch expression {
    case .keyPath(let path):
        let parts = path.components + (path.aggregate.map { [$0.rawValue] } ?? []) + path.aggregateProperty
        return (path.quantifier.map { "\($0.rawValue) " } ?? "") + parts.joined(separator: ".")
    case .constant(let value):
        switch value {
        case .null: return "nil"
        case .bool(let bool): return "\(bool)"
        case .int(let int): return "\(int)"
        case .double(let double): return "\(double)"
        case .string(let string): return "'\(string)'"
        case .argument(let index): return "%@\(index)"
        }
    case .list(let elements, _): return "{" + elements.map(render).joined(separator: ", ") + "}"
    case .subqueryCount(let collection, let variable, let predicate, _):
        return "SUBQUERY(\(render(.keyPath(collection))), \(variable), \(render(predicate)))"
    }
}

private let fuzzTokens = [
    "age", "name", "dogs.age", "a.b.c", "é", "名前", "ANY", "SOME", "ALL", "NONE", "AND", "OR", "NOT", "and", "!", "&&", "||",
    "(", ")", "{", "}", ",", ".", "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "&", "|", "~",
    "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "IN", "BETWEEN", "[c]", "[cd]", "[x]", "[", "]", "[]",
    "'str'", "\"dq\\\"s\"", "'\\u{41}'", "'\\uD83D\\uDE00'", "'\\u{110000}'", "'\\q'", "'unterminated", "\"", "\\",
    "5", "-3", "+2", "0x1F", "0x", "1.5e3", "1e", "99999999999999999999", "-9223372036854775808", "5.5.5",
    "%@", "%K", "%d", "%lld", "%", "%y", "SUBQUERY", "SUBQUERY(", "$x", "$x.age", "$", "@count", "@sum", ".@avg", "@",
    "@foo", ".@count", "TRUEPREDICATE", "FALSEPREDICATE", "true", "nil", "NULL", "YES", "😀", "\u{0}", "\u{301}",
]

private let validPredicates = [
    "age > 5 AND name BEGINSWITH[c] 'B' OR NOT (dogs.@count >= 2)",
    "ANY dogs.age BETWEEN {1, 5} && name IN {'a', \"b\", %@}",
    "SUBQUERY(dogs, $d, $d.age > %@ AND $d.name CONTAINS[cd] 'é').@count == 0",
    "%K == %@ || items.@sum.price =< 1.5e3 || id == 0x1F",
    "name == '\\u{1F600}\\n\\'' AND TRUEPREDICATE AND NOT FALSEPREDICATE",
    "prénom LIKE 'J?a*' AND score <> -7 AND flag == YES AND owner != nil",
]
