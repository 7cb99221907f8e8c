//! C++ parsing: definitions, qualified names, out-of-line members, includes, references.

use super::parse_file;
use super::tests::{find, has_ref, outline};
use crate::model::{DefKind, Lang, RefKind};

const PARSER_HPP: &str = r#"#pragma once
#include <string>
#include "json/value.h"

namespace json::detail {

/// Reads JSON text into values.
class Parser : public Base, private Logger<Parser> {
 public:
  explicit Parser(std::string text);
  ~Parser();
  /// Parses one value.
  Value parse();
  bool done() const { return pos_ >= text_.size(); }
  static constexpr int kMaxDepth = 512;

 private:
  std::string text_;
  Lexer lexer_;
  size_t pos_ = 0;
};

template <typename T>
T parse_as(const std::string& text) {
  Parser p(text);
  return p.parse().as<T>();
}

using Handler = std::function<void(const Value&)>;

enum class Kind { Null, Number };

}  // namespace json::detail
"#;

const PARSER_CPP: &str = r#"#include "parser.hpp"

namespace json::detail {

Parser::Parser(std::string text) : text_(std::move(text)), lexer_(text_) {}

Parser::~Parser() = default;

Value Parser::parse() {
  auto token = lexer_.next();
  if (done()) {
    throw ParseError("end of input");
  }
  auto* v = new Value(token);
  return this->finish(*v);
}

}  // namespace json::detail

int main() {
  json::detail::Parser p("1");
  return json::detail::parse_as<int>("2");
}
"#;

#[test]
fn cpp_namespaces_classes_members_templates_and_aliases() {
    let f = parse_file("include/json/parser.hpp", Lang::Cpp, PARSER_HPP.as_bytes());
    let names: Vec<(DefKind, String)> = outline(&f).into_iter().map(|o| (o.0, o.1)).collect();
    for expected in [
        (DefKind::Module, "json::detail"),
        (DefKind::Class, "json::detail::Parser"),
        (DefKind::Method, "json::detail::Parser::done"),
        (DefKind::Constant, "json::detail::Parser::kMaxDepth"),
        (DefKind::Function, "json::detail::parse_as"),
        (DefKind::TypeAlias, "json::detail::Handler"),
        (DefKind::Enum, "json::detail::Kind"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    // Prototypes inside the class are not definitions: their bodies are, out of line.
    assert!(
        !names.iter().any(|n| n.1.ends_with("Parser::parse")),
        "{names:?}"
    );
    assert_eq!(
        find(&f, "json::detail::Parser").doc.as_deref(),
        Some("Reads JSON text into values.")
    );
    assert!(has_ref(&f, RefKind::Inherits, None, "Base"));
    assert!(has_ref(&f, RefKind::Inherits, None, "Logger"));
    assert!(has_ref(&f, RefKind::Type, None, "Lexer"));
    assert!(has_ref(&f, RefKind::Call, Some("p"), "parse"));
    assert!(f.imports.iter().any(|i| i.module == "json/value.h"));
    assert!(f.imports.iter().any(|i| i.module == "<string>"));
}

#[test]
fn cpp_out_of_line_members_constructors_and_calls() {
    let f = parse_file("src/parser.cpp", Lang::Cpp, PARSER_CPP.as_bytes());
    let ctor = find(&f, "json::detail::Parser::Parser");
    assert_eq!(ctor.kind, DefKind::Constructor);
    let parse = find(&f, "json::detail::Parser::parse");
    assert_eq!(parse.kind, DefKind::Method);
    assert_eq!(parse.name, "parse");
    assert_eq!(find(&f, "main").kind, DefKind::Function);
    // Calls: a member through a field, an implicit-this call, a construction, a qualified
    // call and a template function.
    assert!(has_ref(&f, RefKind::Call, Some("lexer_"), "next"));
    assert!(has_ref(&f, RefKind::Call, None, "done"));
    assert!(has_ref(&f, RefKind::Call, None, "Value"));
    assert!(has_ref(&f, RefKind::Call, Some("this"), "finish"));
    assert!(has_ref(&f, RefKind::Call, Some("detail"), "parse_as"));
    assert!(has_ref(&f, RefKind::Call, None, "ParseError"));
}

#[test]
fn a_header_using_cpp_is_parsed_as_cpp_and_a_c_header_as_c() {
    let cpp = parse_file("include/fmt/core.h", Lang::C, PARSER_HPP.as_bytes());
    assert_eq!(cpp.lang, Lang::Cpp);
    let c = parse_file(
        "src/jv.h",
        Lang::C,
        b"#include <stdio.h>\ntypedef struct { int kind; } jv;\nint jv_kind(jv v);\n",
    );
    assert_eq!(c.lang, Lang::C);
}

#[test]
fn broken_cpp_never_panics_and_keeps_what_parsed() {
    let src = "namespace a {\nclass B {\n public:\n  void f() { g( }\n};\nvoid B::h() { f(); }\n";
    let f = parse_file("src/broken.cc", Lang::Cpp, src.as_bytes());
    assert!(!f.diagnostics.is_empty());
    assert!(
        f.definitions.iter().any(|d| d.name == "B"),
        "{:#?}",
        outline(&f)
    );
}

#[test]
fn an_export_macro_between_class_and_name_leaves_a_class() {
    let src = "#define SPDLOG_API __attribute__((visibility(\"default\")))\nnamespace spdlog {\nclass SPDLOG_API logger final : public base {\npublic:\n    void info() { flush_(); }\n};\nstruct SPDLOG_API log_msg {\n    int level;\n};\nstruct STAT st;\n}\n";
    let f = parse_file("include/spdlog/logger.h", Lang::Cpp, src.as_bytes());
    let names: Vec<(DefKind, String)> = outline(&f).into_iter().map(|o| (o.0, o.1)).collect();
    for expected in [
        (DefKind::Class, "spdlog::logger"),
        (DefKind::Method, "spdlog::logger::info"),
        (DefKind::Struct, "spdlog::log_msg"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    assert!(has_ref(&f, RefKind::Inherits, None, "base"));
    assert!(!has_ref(&f, RefKind::Type, None, "SPDLOG_API"));
    // The signature is the file's own text, macro and all.
    assert_eq!(
        find(&f, "spdlog::logger").signature,
        "class SPDLOG_API logger final : public base"
    );
    // `struct STAT st;` declares a variable of type `struct STAT`: nothing is blanked.
    assert!(has_ref(&f, RefKind::Type, None, "STAT"));
}

#[test]
fn a_specifier_macro_before_a_declaration_is_no_type() {
    let src = "#define FMT_CONSTEXPR constexpr\n#define MY_INT int\nnamespace fmt {\nFMT_CONSTEXPR auto parse(int x) -> int { return step(x); }\nSPDLOG_INLINE void logger::info() { flush_(); }\nMY_TYPE value;\n}\n";
    let f = parse_file("include/fmt/core.h", Lang::Cpp, src.as_bytes());
    let names: Vec<(DefKind, String)> = outline(&f).into_iter().map(|o| (o.0, o.1)).collect();
    for expected in [
        (DefKind::Function, "fmt::parse"),
        (DefKind::Method, "fmt::logger::info"),
        (DefKind::Constant, "MY_INT"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    assert!(!has_ref(&f, RefKind::Type, None, "FMT_CONSTEXPR"));
    assert!(!has_ref(&f, RefKind::Type, None, "SPDLOG_INLINE"));
    assert!(has_ref(&f, RefKind::Call, None, "step"));
    // A type in capitals followed by a name is a type.
    assert!(has_ref(&f, RefKind::Type, None, "MY_TYPE"));
}

#[test]
fn a_macro_before_a_type_and_its_declarator_is_no_type() {
    let src = "namespace CLI {
class App {
  public:
    CLI11_NODISCARD App *get_subcommand(int index) const;
    CLI11_NODISCARD CLI11_INLINE char **ensure_utf8(char **argv);
};
CLI11_INLINE App::App(std::string name) : name_(name) { init(); }
CLI11_INLINE App *App::callback(int x) { return this; }
void use() { LARGE_INTEGER start; MY_TYPE value = make(); }
}
";
    let f = parse_file("include/CLI/App.hpp", Lang::Cpp, src.as_bytes());
    let names: Vec<(DefKind, String)> = outline(&f).into_iter().map(|o| (o.0, o.1)).collect();
    for expected in [
        (DefKind::Class, "CLI::App"),
        (DefKind::Constructor, "CLI::App::App"),
        (DefKind::Method, "CLI::App::callback"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    for macro_name in ["CLI11_INLINE", "CLI11_NODISCARD"] {
        assert!(
            !has_ref(&f, RefKind::Type, None, macro_name),
            "{macro_name}"
        );
    }
    assert!(has_ref(&f, RefKind::Call, None, "init"));
    // Types in capitals declaring variables stay types.
    assert!(has_ref(&f, RefKind::Type, None, "LARGE_INTEGER"));
    assert!(has_ref(&f, RefKind::Type, None, "MY_TYPE"));
}

#[test]
fn the_standard_librarys_names_are_no_references_but_their_arguments_are() {
    let src = "#include <vector>\nstruct Option {};\nstd::vector<Option> all;\nstd::string name;\nvoid f(std::map<std::string, Option> &m) {\n    auto p = std::make_shared<Option>();\n    std::sort(all.begin(), all.end(), cmp(name));\n    mine::vector<int> v;\n}\n";
    let f = parse_file("src/opts.cpp", Lang::Cpp, src.as_bytes());
    for std_name in ["string", "map", "make_shared", "sort"] {
        assert!(
            !f.references.iter().any(|r| r.name == std_name),
            "{std_name} in {:?}",
            f.references
                .iter()
                .map(|r| (r.kind, r.name))
                .collect::<Vec<_>>()
        );
    }
    let uses_option = f.references.iter().filter(|r| r.name == "Option").count();
    assert_eq!(uses_option, 3, "in vector<…>, map<…> and make_shared<…>");
    assert!(has_ref(&f, RefKind::Call, None, "cmp"));
    // Another namespace's `vector` is a reference; the standard one is not.
    assert_eq!(
        f.references.iter().filter(|r| r.name == "vector").count(),
        1
    );
}

#[test]
fn a_fixture_tests_body_is_a_method_of_its_fixture() {
    let src = "namespace leveldb {\nstruct DBTest {\n  void Put(int k);\n};\nTEST_F(DBTest, Empty) {\n  Put(1);\n}\n}\nstruct TApp {\n  void run();\n};\nTEST_CASE_METHOD(TApp, \"OneFlagShort\", \"[app]\") {\n    run();\n}\nTEST(Plain, Case) { helper(); }\n";
    let f = parse_file("db/db_test.cc", Lang::Cpp, src.as_bytes());
    let empty = find(&f, "leveldb::DBTest::Empty");
    assert_eq!(
        (empty.kind, empty.name.as_str()),
        (DefKind::Method, "Empty")
    );
    assert_eq!(empty.signature, "TEST_F(DBTest, Empty)");
    assert_eq!((empty.start_line, empty.end_line), (5, 7));
    let case = find(&f, "TApp::OneFlagShort");
    assert_eq!(case.kind, DefKind::Method);
    assert_eq!(
        case.signature,
        "TEST_CASE_METHOD(TApp, \"OneFlagShort\", \"[app]\")"
    );
    assert_eq!((case.start_line, case.end_line), (12, 14));
    // The calls inside are the methods' own; the fixtures are used.
    for (call, scope) in [("Put", "Empty"), ("run", "OneFlagShort")] {
        assert!(
            f.references.iter().any(|r| r.name == call
                && r.scope
                    .is_some_and(|s| f.definitions[s as usize].name == scope)),
            "{call} inside {scope}"
        );
    }
    assert!(has_ref(&f, RefKind::Type, None, "DBTest"));
    assert!(has_ref(&f, RefKind::Type, None, "TApp"));
    // No definition is named after the macro; a test without a fixture calls as any code.
    assert!(f.definitions.iter().all(|d| d.name != "TEST_F"));
    assert!(has_ref(&f, RefKind::Call, None, "helper"));
}
