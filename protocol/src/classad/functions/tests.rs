//! Tests of the built-in functions against values confirmed with HTCondor's
//! own library (`classad2`, HTCondor 25).

use super::super::eval::Evaluator;
use super::super::parser::{parse_ad, parse_expr};
use super::super::unparse::unparse_value;
use super::super::value::Value;

/// The value of an expression with no ad, unparsed (strings are shown
/// quoted).
fn eval(text: &str) -> String {
    let e = parse_expr(text).unwrap_or_else(|err| panic!("{text}: {err}"));
    unparse_value(&Evaluator::new().now(1_583_298_367).eval(&e))
}

/// The value of an expression evaluated in an ad, unparsed.
fn eval_in(ad: &str, text: &str) -> String {
    let ad = parse_ad(ad).expect("ad");
    let e = parse_expr(text).expect("expr");
    unparse_value(&Evaluator::with_ads(Some(&ad), None).eval(&e))
}

fn check(cases: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (expr, want) in cases {
        let got = eval(expr);
        if got != *want {
            failures.push(format!("{expr}: got {got}, want {want}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn conversions_follow_c() {
    check(&[
        ("int(\"12abc\")", "12"),
        ("int(\"1e3\")", "1000"),
        ("int(\"0x10\")", "16"),
        ("int(\"9223372036854775807\")", "-9223372036854775808"),
        ("int(1e30)", "-9223372036854775808"),
        ("int(real(\"nan\"))", "-9223372036854775808"),
        ("int(\"abc\")", "error"),
        ("int(\" \")", "error"),
        ("int(undefined)", "undefined"),
        ("int(relTime(90.7))", "90"),
        ("real(\"1.5abc\")", "1.500000000000000E+00"),
        ("real(\"0x1p3\")", "8.000000000000000E+00"),
        ("real(\"1e\")", "1.000000000000000E+00"),
        ("real(\".\")", "error"),
        ("real(\"infinity\")", "real(\"INF\")"),
        ("real(false)", "0.0"),
        ("string(1.5)", "\"1.500000000000000E+00\""),
        ("string({1,\"a\"})", "\"{ 1,\\\"a\\\" }\""),
        ("string(undefined)", "undefined"),
        ("bool(\"TRUE\")", "true"),
        ("bool(\"yes\")", "undefined"),
        ("bool(absTime(5))", "error"),
        ("floor(undefined)", "error"),
        ("floor(\"2.5\")", "2"),
        ("round(2.5)", "2"),
        ("round(3.5)", "4"),
        ("ceiling(-1.2)", "-1"),
    ]);
}

#[test]
fn arithmetic_functions() {
    check(&[
        ("pow(2,10)", "1024"),
        ("pow(2,-1)", "5.000000000000000E-01"),
        ("pow(2,100)", "-9223372036854775808"),
        ("pow(true,2)", "1.000000000000000E+00"),
        ("pow(undefined,2)", "error"),
        ("quantize(6.8, 1.2)", "7.199999999999999E+00"),
        ("quantize(-3, -2)", "-6"),
        ("quantize(2, {1, 2, \"A\"})", "2"),
        ("quantize(3, {1, 2, \"A\"})", "error"),
        ("quantize(2.7, {1, 2, 0.5})", "3.000000000000000E+00"),
        ("quantize(3, {})", "3"),
        ("quantize(7, true)", "7.000000000000000E+00"),
        ("random(0)", "error"),
        ("isInteger(random(10))", "true"),
        ("random(\"a\")", "error"),
    ]);
}

#[test]
fn string_functions() {
    check(&[
        (
            "strcat(\"a\", 1, 2.5, true)",
            "\"a12.500000000000000E+00true\"",
        ),
        ("strcat(\"a\", undefined, error)", "undefined"),
        ("strcat()", "\"\""),
        ("join(1, 2, 3)", "\"213\""),
        ("join(undefined, \"a\", \"b\")", "\"ab\""),
        ("join(\",\", {\"a\", undefined, \"b\"})", "\"a,b\""),
        ("join(\",\", undefined)", "undefined"),
        ("join(\",\", \"a\", error)", "error"),
        ("substr(\"abcdef\", 2, -1)", "\"cde\""),
        ("substr(\"abcdef\", -10)", "\"abcdef\""),
        ("substr(\"abc\", 9999999999)", "\"\""),
        ("substr(\"abc\", 1, undefined)", "undefined"),
        ("strcmp(error, undefined)", "undefined"),
        ("strcmp({1}, \"a\")", "1"),
        ("stricmp(\"a\", \"B\")", "-1"),
        ("toUpper({1})", "\"{ 1 }\""),
        ("size([a=1;b=2])", "2"),
        ("size(1)", "error"),
        ("length(\"abc\")", "error"),
    ]);
    // Cutting a multi-byte character yields a replacement character, never
    // a panic.
    assert_eq!(eval("substr(\"aé\", 0, 2)"), "\"a\\357\\277\\275\"");
}

#[test]
fn version_comparison_matches_natural_cmp() {
    check(&[
        ("versioncmp(\"01\", \"010\")", "-48"),
        ("versioncmp(\"000\", \"00\")", "-1"),
        ("versioncmp(\"abc\", \"ab\")", "99"),
        ("versioncmp(\"a1\", \"a01\")", "1"),
        ("versioncmp({1}, \"1\")", "74"),
        ("versioncmp(\"8.9.1\", \"8.10.0\")", "-1"),
        ("versionle(\"1\", \"2\")", "true"),
        ("versioncmp(error, undefined)", "undefined"),
        ("version_in_range(undefined, \"1.0\", \"2.0\")", "error"),
        ("version_in_range(\"1.5\", undefined, \"2.0\")", "undefined"),
    ]);
}

#[test]
fn splitting() {
    check(&[
        ("split(\"a, ,b\")", "{ \"a\",\"\",\"b\" }"),
        ("split(\"a;;b;\", \";\")", "{ \"a\",\"\",\"b\" }"),
        ("split(\",a\")", "{ \"a\" }"),
        ("split(\"a\\tb\\nc\")", "{ \"a\",\"b\\nc\" }"),
        ("split(\"abc\", \"\")", "{ \"abc\" }"),
        ("split(undefined)", "error"),
        ("splitUserName(\"a@b@c\")", "{ \"a\",\"b@c\" }"),
        ("splitSlotName(\"host\")", "{ \"\",\"host\" }"),
    ]);
}

#[test]
fn string_lists() {
    check(&[
        ("stringListSize(\"a\\tb\\nc\")", "1"),
        ("stringListSize(\" a ; b \", \";\")", "2"),
        ("stringListSum(\"1,2.5\")", "3.500000000000000E+00"),
        ("stringListSum(\"1x\")", "1.000000000000000E+00"),
        ("stringListSum(\"\")", "0.0"),
        ("stringListAvg(\"1,2\")", "1"),
        ("stringListMin(\"\")", "undefined"),
        ("stringListMax(\"-1,-2\")", "0"),
        ("stringListMax(\"-1.5\")", "1.175494350822288E-38"),
        ("stringListMin(\"5e40\")", "3.402823466385289E+38"),
        ("stringListSize(undefined)", "error"),
        ("stringListMember(\"b\", \"a\\tb\")", "true"),
        ("stringListMember(\"b c\", \"a;b c\", \";\")", "true"),
        ("stringListMember(undefined, \"a\")", "false"),
        ("stringListMember(undefined, undefined)", "undefined"),
        ("stringListMember(1, \"1\")", "error"),
        ("stringListIMember(\"A\", \"a,b\")", "true"),
        ("stringListsIntersect(\"a\\tb\", \"b\")", "false"),
        ("stringListsIntersect(\"a\", \"a\", undefined)", "undefined"),
        ("stringListSubsetMatch(undefined, \"b\")", "true"),
        ("stringListSubsetMatch(\",,\", \"b\")", "false"),
        ("stringListISubsetMatch(\"A\", \"a\")", "true"),
        (
            "stringList_regexpMember(\"^A\", \"xa,ab\", \",\", \"I\")",
            "true",
        ),
        ("stringList_regexpMember(\"a\", \"\")", "undefined"),
        ("stringList_regexpMember(\"(\", \"a\")", "error"),
    ]);
}

#[test]
fn regular_expressions() {
    check(&[
        ("regexp(\"A\", \"a\", \"i\")", "true"),
        ("regexp(\"A\", \"a\", \"I\")", "false"),
        ("regexp(\"^b\", \"a\\nb\", \"m\")", "true"),
        ("regexp(\"a.b\", \"a\\nb\", \"s\")", "true"),
        ("regexp(\"a b\", \"ab\", \"x\")", "true"),
        ("regexp(\"\\\\w+\", \"é\")", "false"),
        ("regexp(\"[é]\", \"é\")", "true"),
        ("regexp(\"(\", \"a\")", "error"),
        ("regexp(1, undefined)", "undefined"),
        ("regexp(\"a\", \"a\", undefined)", "undefined"),
        ("regexpMember(\"^a\", {undefined, \"x\"})", "undefined"),
        ("regexpMember(\"^a\", {\"ab\", 1})", "true"),
        ("regexpMember(\"(\", {\"ab\"})", "false"),
        ("regexps(\"a(b)c\", \"xabcx\", \"[\\\\1]\")", "\"[b]\""),
        ("regexps(\"a(b)c\", \"xabcx\", \"[\\\\2]\")", "error"),
        ("regexps(\"a(b)c\", \"xyz\", \"[\\\\1]\")", "\"\""),
        ("regexps(\"a\", \"aXa\", \"b\", \"g\")", "\"bb\""),
        ("regexps(\"a\", \"aXa\", \"b\\\\\")", "\"b\\\\\""),
        ("replace(\"x*\", \"abc\", \"-\")", "\"-abc\""),
        ("replace(\"(a)|(b)\", \"b\", \"[\\\\1]\")", "\"[]\""),
        ("replaceAll(\"a\", \"aXa\", \"b\")", "\"bXb\""),
        ("replaceAll(\"b*\", \"bac\", \"-\")", "error"),
        ("replaceAll(\"(a)|(b)\", \"ab\", \"[\\\\1\\\\2]\")", "error"),
        ("replaceAll(\"é\", \"éaé\", \"e\")", "\"eae\""),
    ]);
}

#[test]
fn list_functions() {
    check(&[
        ("member(1, {\"a\", 1})", "true"),
        ("member(undefined, {1})", "undefined"),
        ("member({1}, {1})", "error"),
        ("identicalMember(undefined, {undefined})", "true"),
        ("identicalMember(1, {1.0})", "false"),
        ("anyCompare(\"<\", {undefined, 1}, 2)", "false"),
        ("allCompare(\"<\", {}, 2)", "true"),
        ("anyCompare(\"<>\", {1}, 2)", "error"),
        ("anyCompare(\"is\", {\"a\"}, \"A\")", "false"),
        ("sum({true})", "true"),
        ("sum({undefined})", "0"),
        ("sum({9223372036854775807, 1})", "-9223372036854775808"),
        ("sum({1e308, 1e308})", "error"),
        ("avg({1,undefined,3})", "2.000000000000000E+00"),
        ("avg({})", "0"),
        ("min({1.5,1})", "1.000000000000000E+00"),
        ("min({})", "undefined"),
        ("max({true})", "true"),
        ("min({1,\"a\"})", "error"),
    ]);
}

#[test]
fn time_functions() {
    check(&[
        ("time()", "1583298367"),
        ("absTime(0, 3600)", "absTime(\"1970-01-01T01:00:00+01:00\")"),
        ("absTime(1e30)", "absTime(\"1901-12-13T20:45:52-00:00\")"),
        ("absTime(true)", "error"),
        ("relTime(absTime(5))", "relTime(\"05\")"),
        ("getHours(absTime(\"2020-03-04T05:06:07+01:00\"))", "4"),
        ("getDayOfYear(absTime(\"2020-03-04T05:06:07+01:00\"))", "63"),
        ("getSeconds(relTime(-200000))", "-20"),
        ("getDays(absTime(0))", "error"),
        (
            "splitTime(relTime(-65))",
            "[ Days = 0; Type = \"RelativeTime\"; Hours = 0; Minutes = -1; Seconds = 5.000000000000000E+00 ]",
        ),
        (
            "splitTime(absTime(\"2020-03-04T05:06:07+01:00\"))",
            "[ Day = 4; Type = \"AbsoluteTime\"; Year = 2020; Hours = 5; Month = 3; Offset = 3600; Minutes = 6; Seconds = 7 ]",
        ),
        ("splitTime(undefined)", "undefined"),
        ("splitTime([a=1])", "error"),
        ("formatTime(absTime(\"2020-03-04T05:06:07+01:00\"))", "\"Wed Mar  4 05:06:07 2020\""),
        (
            "formatTime(0, \"%e|%k|%l|%_d|%^a|%#b|%P|%10A|%-5d|%05e|%_5d\")",
            "\" 1| 0|12| 1|THU|JAN|am|  Thursday|    1|00001|    1\"",
        ),
        ("formatTime(1609459200, \"%G %g %V %u %U %W %j\")", "\"2020 20 53 5 00 00 001\""),
        (
            "formatTime(1583298367, \"%x|%X|%D|%T|%R|%F|%r|%s|%E|%q|%\")",
            "\"03/04/20|05:06:07|03/04/20|05:06:07|05:06|2020-03-04|05:06:07 AM|1583298367|%E|%q|%\"",
        ),
        (
            "formatTime([Year=2020; Month=2; Day=3; Hours=4; Minutes=5; Seconds=6], \"%c %j %a\")",
            "\"Mon Feb  3 04:05:06 2020 034 Mon\"",
        ),
        ("formatTime([], \"%c\")", "\"Sun Jan  0 00:00:00 1900\""),
        ("formatTime([Year=2020; Month=13; Day=3], \"%b %B %m\")", "\"? ? 13\""),
        ("formatTime(relTime(5))", "error"),
        ("formatTime(0, undefined)", "error"),
        ("interval(-1472523)", "\"-17+01:02:03\""),
        ("interval(67)", "\"1:07\""),
        ("interval(9999999999)", "\"16320+04:50:07\""),
        ("interval(undefined)", "error"),
    ]);
}

#[test]
fn environment_and_arguments() {
    check(&[
        ("envV1ToV2(\"B=1;A=2\")", "\"A=2 B=1\""),
        ("envV1ToV2(\"A=1 2;B=x y\")", "\"A=1' '2 B=x' 'y\""),
        ("envV1ToV2(\"A='1'\")", "\"A=''''1''''\""),
        ("envV1ToV2(\"=1\")", "error"),
        ("envV1ToV2(undefined)", "undefined"),
        (
            "mergeEnvironment(\"A=1 B=2\", undefined, \"B=3\")",
            "\"A=1 B=3\"",
        ),
        ("mergeEnvironment(\"A='it''s'\")", "\"A=it''''s\""),
        ("mergeEnvironment(\"A='\")", "error"),
        ("mergeEnvironment(\"A=1 B\")", "error"),
        ("argsToList(\"a b 'c d'\")", "{ \"a\",\"b\",\"c d\" }"),
        ("argsToList(\"a;b\", 1)", "{ \"a;b\" }"),
        ("listToArgs({\"a\", \"b'c\"})", "\"a b''''c\""),
        ("listToArgs({\"a\", \"b c\"}, 1)", "error"),
        ("userHome(undefined, \"/d\")", "\"/d\""),
        ("userHome(1)", "error"),
        ("userMap(\"m\", \"u\", error, \"d\")", "\"d\""),
        ("userMap(\"m\", error)", "error"),
    ]);
}

#[test]
fn functions_in_ads() {
    let cases = [
        (
            "[a = x + 3.5 * (y - 1); x = 1]",
            "unparse(a)",
            "\"x + 3.500000000000000E+00 * (y - 1)\"",
        ),
        ("[a = 1]", "unparse(b)", "\"\""),
        ("[a = 1]", "unparse(MY.a)", "\"\""),
        ("[a = 1]", "unparse(1)", "error"),
        (
            "[a = x + TARGET.y + MY.z + q.r; x = 1]",
            "unresolved(a)",
            "\"q.r,y,z\"",
        ),
        (
            "[req = Memory > 10 && TARGET.Disk > 5 && MY.Cpus > 1; Cpus = 2]",
            "unresolved(req)",
            "\"Memory,Disk\"",
        ),
        (
            "[a = Zeta + alpha + Beta]",
            "unresolved(a)",
            "\"alpha,Beta,Zeta\"",
        ),
        ("[a = [p = x; q = p]]", "unresolved(a)", "\"p,x\""),
        (
            "[a = OpSys == \"LINUX\" && Arch == \"ARM\"]",
            "unresolved(a, \"^opsys\")",
            "true",
        ),
        ("[req = Memory > 10]", "unresolved(MY.req)", "\"Memory\""),
        ("[a = 1]", "unresolved(b)", "undefined"),
        ("[x = 5]", "eval(\"x + 1\")", "6"),
        ("[a = eval(\"a\")]", "a", "undefined"),
        ("[s = \"eval(s)\"]", "eval(s)", "error"),
        ("[x = 5]", "evalInEachContext(x, {[x=1], [x=2]})", "{ 5,5 }"),
        (
            "[x = 5]",
            "evalInEachContext(x + y, {[x=1], [y=2]})",
            "{ undefined,7 }",
        ),
        ("[x = 5]", "evalInEachContext(x, {[x=1], 3})", "{ 5,error }"),
        ("[x = 5]", "evalInEachContext(x, undefined)", "undefined"),
        ("[x = 5]", "evalInEachContext(x, [x=1])", "error"),
        ("[x = 5]", "countMatches(x > 2, {[x=3], [x=1]})", "1"),
        ("[x = 5]", "countMatches(x, {[x=1], [x=true]})", "2"),
        // A scoped reference is looked up first, as in HTCondor's jobs'
        // `countMatches(MY.RequireGPUs, TARGET.AvailableGPUs)`.
        (
            "[x = 5; r = x > 2]",
            "countMatches(MY.r, {[x=3], [x=1]})",
            "1",
        ),
        ("[x = 5]", "countMatches(x > 2, undefined)", "0"),
        (
            "[x = 5; p = [x=3]; q = [x=9]]",
            "countMatches(x > 2, {p, q})",
            "2",
        ),
    ];
    let mut failures = Vec::new();
    for (ad, expr, want) in cases {
        let got = eval_in(ad, expr);
        if got != want {
            failures.push(format!("{ad} {expr}: got {got}, want {want}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn odd_formats_do_not_panic() {
    check(&[
        ("formatTime(0, \"%é|%\")", "\"%\\303\\251|%\""),
        ("formatTime(0, \"é%Yé\")", "\"\\303\\2511970\\303\\251\""),
    ]);
}

#[test]
fn results_are_bounded() {
    use super::super::ad::ClassAd;
    use super::super::limits::MAX_STRING_LEN;
    let mut ad = ClassAd::new();
    let big = "x".repeat(MAX_STRING_LEN / 2 + 1);
    ad.insert_str("s", Value::string(big.as_str())).unwrap();
    let run = |text: &str| {
        let e = parse_expr(text).unwrap();
        Evaluator::with_ads(Some(&ad), None).eval(&e)
    };
    assert!(run("strcat(s, s)").is_error());
    assert!(run("join(\"\", s, s)").is_error());
    assert!(run("replaceAll(\"x\", s, \"yy\")").is_error());
    assert!(run("toUpper(strcat(s, s))").is_error());
    assert_eq!(
        run("size(strcat(s, \"a\"))").as_int(),
        Some(MAX_STRING_LEN as i64 / 2 + 2)
    );
}
