//! Names every program of a language may use without defining them: references to these are
//! not recorded (they can never resolve to the repository, and would only dilute the graph).

mod dynamic;
mod jvm;
mod native;

use crate::model::Lang;
use dynamic::{JS, PHP, PYTHON, RUBY};
use jvm::{CSHARP, JAVA, KOTLIN, SCALA};
use native::{C, CPP, GO, RUST, SWIFT};

pub fn is_builtin(lang: Lang, name: &str) -> bool {
    let list = match lang {
        Lang::Python => PYTHON,
        Lang::Rust => RUST,
        Lang::Go => GO,
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => JS,
        Lang::Java => JAVA,
        Lang::Kotlin => KOTLIN,
        Lang::Scala => SCALA,
        Lang::Php => PHP,
        Lang::Swift => SWIFT,
        Lang::CSharp => CSHARP,
        Lang::Ruby => RUBY,
        Lang::C => C,
        Lang::Cpp => CPP,
        Lang::Markdown => return false,
    };
    list.contains(&name)
}
