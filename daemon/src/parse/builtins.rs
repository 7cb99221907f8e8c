//! Names every program of a language may use without defining them: references to these are
//! not recorded (they can never resolve to the repository, and would only dilute the graph).

use crate::model::Lang;

const PYTHON: &[&str] = &[
    "abs", "all", "any", "bool", "bytes", "callable", "chr", "dict", "dir", "enumerate",
    "filter", "float", "frozenset", "getattr", "hasattr", "hash", "id", "int", "isinstance",
    "issubclass", "iter", "len", "list", "map", "max", "min", "next", "object", "open", "ord",
    "print", "range", "repr", "reversed", "round", "set", "setattr", "sorted", "str", "sum",
    "super", "tuple", "type", "vars", "zip", "None", "Any", "Optional", "Union", "List", "Dict",
    "Tuple", "Set", "Callable", "Iterable", "Iterator", "TypeAlias", "Exception", "ValueError",
    "TypeError", "KeyError", "RuntimeError", "AttributeError", "NotImplementedError",
];
const RUST: &[&str] = &[
    "assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq", "debug_assert_ne",
    "vec", "format", "format_args", "println", "eprintln", "print", "eprint", "write", "writeln",
    "panic", "unreachable", "todo", "unimplemented", "matches", "concat", "stringify",
    "include_str", "include_bytes", "env", "cfg", "dbg", "line", "file", "column",
    "module_path", "thread_local", "compile_error", "Ok", "Err", "Some", "None", "Option",
    "Result", "Vec", "String", "Box", "Rc", "Arc", "Self", "str", "usize", "u8", "u16", "u32",
    "u64", "i32", "i64", "bool", "f32", "f64", "char", "isize", "i8", "i16", "u128", "i128",
];
const GO: &[&str] = &[
    "append", "cap", "close", "complex", "copy", "delete", "imag", "len", "make", "new",
    "panic", "print", "println", "real", "recover", "min", "max", "clear", "string", "int",
    "int64", "int32", "uint", "uint64", "uint32", "byte", "rune", "bool", "error", "float64",
    "float32", "any", "uintptr", "int8", "int16", "uint8", "uint16",
];
const JS: &[&str] = &[
    "require", "parseInt", "parseFloat", "isNaN", "String", "Number", "Boolean", "Object",
    "Array", "Promise", "Error", "TypeError", "Symbol", "Map", "Set", "Date", "RegExp", "JSON",
    "setTimeout", "clearTimeout", "setInterval", "clearInterval", "encodeURIComponent",
    "decodeURIComponent", "string", "number", "boolean", "any", "unknown", "void", "never",
    "Record", "Partial", "Readonly", "Pick", "Omit", "Exclude", "Extract", "ReturnType",
    "Parameters", "Awaited", "Required",
];
const JAVA: &[&str] = &[
    "String", "Object", "Integer", "Long", "Boolean", "Double", "Float", "Character", "Byte",
    "Short", "Void", "Class", "List", "Map", "Set", "Exception", "RuntimeException",
    "IllegalArgumentException", "IllegalStateException", "Override", "Deprecated",
];

pub fn is_builtin(lang: Lang, name: &str) -> bool {
    let list = match lang {
        Lang::Python => PYTHON,
        Lang::Rust => RUST,
        Lang::Go => GO,
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => JS,
        Lang::Java => JAVA,
        Lang::Markdown => return false,
    };
    list.contains(&name)
}
