//! Cross-file resolution tests, one small repository per language.

use super::{EdgeKind, Graph};
use crate::testing::graph_of as graph;

fn label(g: &Graph, n: u32) -> String {
    format!("{}#{}", g.file_of(n).path, g.def(n).qualified_name)
}

pub(super) fn edges(g: &Graph, kind: EdgeKind) -> Vec<(String, String)> {
    g.edges
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| (label(g, e.from), label(g, e.to)))
        .collect()
}

pub(super) fn has(g: &Graph, kind: EdgeKind, from: &str, to: &str) -> bool {
    edges(g, kind).iter().any(|(f, t)| f == from && t == to)
}

fn imports(g: &Graph) -> Vec<(String, String)> {
    g.imports
        .iter()
        .map(|&(a, b)| {
            (
                g.files[a as usize].path.clone(),
                g.files[b as usize].path.clone(),
            )
        })
        .collect()
}

#[test]
fn python_imports_methods_and_reexports() {
    let g = graph(&[
        ("pkg/__init__.py", "from .api import get\n"),
        (
            "pkg/api.py",
            "from . import sessions\n\ndef get(url):\n    return sessions.Session().request(url)\n",
        ),
        (
            "pkg/sessions.py",
            "from .models import Request\n\nclass Base:\n    def merge(self): pass\n\nclass Session(Base):\n    def request(self, url):\n        r = Request(url)\n        r.prepare()\n        return self.merge()\n",
        ),
        (
            "pkg/models.py",
            "class Request:\n    def __init__(self, url): pass\n    def prepare(self): pass\n",
        ),
        (
            "tests/test_api.py",
            "import pkg\n\ndef test_get():\n    pkg.get('x')\n",
        ),
    ]);
    assert!(has(
        &g,
        EdgeKind::Calls,
        "pkg/api.py#get",
        "pkg/sessions.py#Session"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        "pkg/sessions.py#Session.request",
        "pkg/models.py#Request"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        "pkg/sessions.py#Session.request",
        "pkg/models.py#Request.prepare"
    ));
    // `self.merge()` resolves through the base class.
    assert!(has(
        &g,
        EdgeKind::Calls,
        "pkg/sessions.py#Session.request",
        "pkg/sessions.py#Base.merge"
    ));
    assert!(has(
        &g,
        EdgeKind::Inherits,
        "pkg/sessions.py#Session",
        "pkg/sessions.py#Base"
    ));
    // `pkg.get` goes through the package's re-export to its definition.
    assert!(has(
        &g,
        EdgeKind::Calls,
        "tests/test_api.py#test_get",
        "pkg/api.py#get"
    ));
    let imp = imports(&g);
    assert!(imp.contains(&("pkg/__init__.py".into(), "pkg/api.py".into())));
    assert!(imp.contains(&("pkg/api.py".into(), "pkg/sessions.py".into())));
    assert!(imp.contains(&("pkg/sessions.py".into(), "pkg/models.py".into())));
}

#[test]
fn javascript_relative_imports_index_files_and_require() {
    let g = graph(&[
        (
            "lib/index.js",
            "const { createApp } = require('./app');\nmodule.exports = createApp;\n",
        ),
        (
            "lib/app.js",
            "const router = require('./router');\nfunction createApp() { return router.build(); }\nmodule.exports = { createApp };\n",
        ),
        (
            "lib/router/index.js",
            "function build() { return new Layer(); }\nclass Layer { handle() {} }\nexports.build = build;\n",
        ),
        (
            "src/view.ts",
            "import { Layer } from '../lib/router';\nexport class View extends Layer {\n  render(): void { this.handle(); }\n}\n",
        ),
    ]);
    assert!(has(
        &g,
        EdgeKind::Calls,
        "lib/app.js#createApp",
        "lib/router/index.js#build"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        "lib/router/index.js#build",
        "lib/router/index.js#Layer"
    ));
    assert!(has(
        &g,
        EdgeKind::Inherits,
        "src/view.ts#View",
        "lib/router/index.js#Layer"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        "src/view.ts#View.render",
        "lib/router/index.js#Layer.handle"
    ));
    let imp = imports(&g);
    assert!(imp.contains(&("lib/index.js".into(), "lib/app.js".into())));
    assert!(imp.contains(&("lib/app.js".into(), "lib/router/index.js".into())));
}

#[test]
fn java_imports_same_package_and_receiver_types() {
    let g = graph(&[
        (
            "src/main/java/com/a/Service.java",
            "package com.a;\nimport com.b.Store;\npublic class Service implements Api {\n  private Store store;\n  public void run() { store.save(); helper(); new Util().go(); }\n  void helper() {}\n}\n",
        ),
        (
            "src/main/java/com/a/Util.java",
            "package com.a;\nclass Util { void go() {} }\n",
        ),
        (
            "src/main/java/com/a/Api.java",
            "package com.a;\ninterface Api { void run(); }\n",
        ),
        (
            "src/main/java/com/b/Store.java",
            "package com.b;\npublic class Store { public void save() {} }\n",
        ),
    ]);
    let svc = "src/main/java/com/a/Service.java#Service";
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{svc}.run"),
        "src/main/java/com/b/Store.java#Store.save"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{svc}.run"),
        &format!("{svc}.helper")
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{svc}.run"),
        "src/main/java/com/a/Util.java#Util.go"
    ));
    assert!(has(
        &g,
        EdgeKind::Implements,
        svc,
        "src/main/java/com/a/Api.java#Api"
    ));
    assert!(imports(&g).contains(&(
        "src/main/java/com/a/Service.java".into(),
        "src/main/java/com/b/Store.java".into()
    )));
}

#[test]
fn go_packages_and_pointer_receivers() {
    let g = graph(&[
        (
            "core/logx/logx.go",
            "package logx\n\ntype Logger struct{}\n\nfunc (l *Logger) Info(s string) {}\n\nfunc New() *Logger { return &Logger{} }\n",
        ),
        (
            "rest/server.go",
            "package rest\n\nimport \"github.com/acme/app/core/logx\"\n\ntype Server struct{ log *logx.Logger }\n\nfunc (s *Server) Start() {\n\tl := logx.New()\n\tl.Info(\"x\")\n\ts.route()\n\tserve()\n}\n",
        ),
        (
            "rest/route.go",
            "package rest\n\nfunc (s *Server) route() {}\n\nfunc serve() {}\n",
        ),
    ]);
    let start = "rest/server.go#Server.Start";
    assert!(has(
        &g,
        EdgeKind::Calls,
        start,
        "core/logx/logx.go#logx.New"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        start,
        "core/logx/logx.go#Logger.Info"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        start,
        "rest/route.go#Server.route"
    ));
    assert!(has(&g, EdgeKind::Calls, start, "rest/route.go#rest.serve"));
    assert!(has(
        &g,
        EdgeKind::References,
        "rest/server.go#rest.Server",
        "core/logx/logx.go#logx.Logger"
    ));
    assert!(imports(&g).contains(&("rest/server.go".into(), "core/logx/logx.go".into())));
}

#[test]
fn rust_use_paths_impls_and_crates() {
    let g = graph(&[
        (
            "crates/searcher/src/lib.rs",
            "pub mod sink;\npub use crate::sink::Sink;\npub struct Searcher;\nimpl Searcher {\n    pub fn new() -> Searcher { Searcher }\n    pub fn search(&self) { self.step(); }\n    fn step(&self) {}\n}\n",
        ),
        (
            "crates/searcher/src/sink.rs",
            "pub trait Sink { fn matched(&mut self); }\n",
        ),
        (
            "crates/core/main.rs",
            "mod search;\nuse grep_searcher::Searcher;\nfn main() { let s = Searcher::new(); s.search(); search::run(); }\n",
        ),
        (
            "crates/core/search.rs",
            "use grep_searcher::Sink;\npub fn run() {}\nstruct Printer;\nimpl Sink for Printer { fn matched(&mut self) {} }\n",
        ),
    ]);
    let lib = "crates/searcher/src/lib.rs";
    assert!(has(
        &g,
        EdgeKind::Calls,
        "crates/core/main.rs#main",
        &format!("{lib}#Searcher::new")
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        "crates/core/main.rs#main",
        &format!("{lib}#Searcher::search")
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        "crates/core/main.rs#main",
        "crates/core/search.rs#run"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{lib}#Searcher::search"),
        &format!("{lib}#Searcher::step")
    ));
    assert!(has(
        &g,
        EdgeKind::Implements,
        "crates/core/search.rs#impl Sink for Printer",
        "crates/searcher/src/sink.rs#Sink"
    ));
    let imp = imports(&g);
    assert!(imp.contains(&("crates/core/main.rs".into(), lib.into())));
    assert!(imp.contains(&(lib.into(), "crates/searcher/src/sink.rs".into())));
}

#[test]
fn linking_is_order_independent() {
    let files = [
        ("a.py", "from b import f\n\ndef g():\n    f()\n"),
        ("b.py", "def f():\n    pass\n"),
    ];
    let g1 = graph(&files);
    let mut rev = files;
    rev.reverse();
    let g2 = graph(&rev);
    assert_eq!(edges(&g1, EdgeKind::Calls), edges(&g2, EdgeKind::Calls));
    assert_eq!(
        edges(&g1, EdgeKind::Calls),
        vec![("a.py#g".to_string(), "b.py#f".to_string())]
    );
}

#[test]
fn csharp_namespaces_usings_and_members() {
    let g = graph(&[
        (
            "src/Acme/Billing/InvoiceService.cs",
            "using Acme.Storage;\nnamespace Acme.Billing;\npublic class InvoiceService : IService\n{\n    private readonly Store _store;\n    public void Run() { _store.Save(); Helper(); new Util().Go(); Shared.Log(); }\n    void Helper() {}\n}\n",
        ),
        (
            "src/Acme/Billing/Util.cs",
            "namespace Acme.Billing { class Util { public void Go() {} } }\n",
        ),
        (
            "src/Acme/Billing/IService.cs",
            "namespace Acme.Billing { public interface IService { void Run(); } }\n",
        ),
        (
            "src/Acme/Shared.cs",
            "namespace Acme { public static class Shared { public static void Log() {} } }\n",
        ),
        (
            "src/Acme/Storage/Store.cs",
            "namespace Acme.Storage;\npublic class Store { public void Save() {} }\n",
        ),
    ]);
    let svc = "src/Acme/Billing/InvoiceService.cs#InvoiceService";
    // Through `using Acme.Storage;` and the field's type.
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{svc}.Run"),
        "src/Acme/Storage/Store.cs#Store.Save"
    ));
    // An unqualified call is a method of this class.
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{svc}.Run"),
        &format!("{svc}.Helper")
    ));
    // Same namespace, another file.
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{svc}.Run"),
        "src/Acme/Billing/Util.cs#Util.Go"
    ));
    // An enclosing namespace is visible without a using.
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{svc}.Run"),
        "src/Acme/Shared.cs#Shared.Log"
    ));
    assert!(has(
        &g,
        EdgeKind::Implements,
        svc,
        "src/Acme/Billing/IService.cs#IService"
    ));
    assert!(imports(&g).contains(&(
        "src/Acme/Billing/InvoiceService.cs".into(),
        "src/Acme/Storage/Store.cs".into()
    )));
}

#[test]
fn ruby_requires_reopened_classes_and_receivers() {
    let g = graph(&[
        (
            "lib/shop/checkout.rb",
            "require \"shop/pricing\"\nrequire_relative \"cart\"\n\nmodule Shop\n  class Checkout\n    def run(cart)\n      pricing = Pricing.new\n      pricing.total(cart)\n      finish\n    end\n\n    def finish; end\n  end\nend\n",
        ),
        (
            "lib/shop/pricing.rb",
            "module Shop\n  class Pricing\n    def total(cart)\n      cart.size\n    end\n  end\nend\n",
        ),
        (
            "lib/shop/cart.rb",
            "module Shop\n  class Cart\n    def size; 0; end\n  end\nend\n",
        ),
    ]);
    let co = "lib/shop/checkout.rb#Shop::Checkout";
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{co}#run"),
        "lib/shop/pricing.rb#Shop::Pricing#total"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        &format!("{co}#run"),
        &format!("{co}#finish")
    ));
    let imports = imports(&g);
    for target in ["lib/shop/pricing.rb", "lib/shop/cart.rb"] {
        assert!(
            imports.contains(&("lib/shop/checkout.rb".into(), target.into())),
            "{imports:?}"
        );
    }
}

#[test]
fn c_includes_resolve_beside_the_file_and_in_include_dirs() {
    let g = graph(&[
        (
            "src/main.c",
            "#include \"util.h\"\n#include <mylib/api.h>\n\nint main(void) { return helper(1) + api_call(); }\n",
        ),
        ("src/util.h", "int helper(int x);\n"),
        (
            "src/util.c",
            "#include \"util.h\"\nint helper(int x) { return x; }\n",
        ),
        ("include/mylib/api.h", "int api_call(void);\n"),
        (
            "lib/api.c",
            "#include <mylib/api.h>\nint api_call(void) { return 2; }\n",
        ),
    ]);
    // Calls resolve to definitions, declared in headers or not.
    assert!(has(
        &g,
        EdgeKind::Calls,
        "src/main.c#main",
        "src/util.c#helper"
    ));
    assert!(has(
        &g,
        EdgeKind::Calls,
        "src/main.c#main",
        "lib/api.c#api_call"
    ));
    let imports = imports(&g);
    for (from, to) in [
        ("src/main.c", "src/util.h"),
        ("src/main.c", "include/mylib/api.h"),
        ("lib/api.c", "include/mylib/api.h"),
    ] {
        assert!(
            imports.contains(&(from.into(), to.into())),
            "{from} → {to} missing: {imports:?}"
        );
    }
}

#[test]
fn kotlin_and_java_share_packages_and_imports() {
    let g = graph(&[
        (
            "src/main/kotlin/com/a/Service.kt",
            "package com.a\n\nimport com.b.Store\n\nclass Service(private val store: Store) : Api {\n    fun run() {\n        store.save()\n        helper()\n        Util().go()\n        Legacy.call()\n    }\n    fun helper() {}\n}\n",
        ),
        (
            "src/main/kotlin/com/a/Util.kt",
            "package com.a\n\nclass Util {\n    fun go() {}\n}\n",
        ),
        (
            "src/main/kotlin/com/a/Api.kt",
            "package com.a\n\ninterface Api {\n    fun run()\n}\n",
        ),
        (
            "src/main/java/com/b/Store.java",
            "package com.b;\npublic class Store { public void save() {} }\n",
        ),
        (
            "src/main/java/com/a/Legacy.java",
            "package com.a;\npublic class Legacy { public static void call() {} }\n",
        ),
    ]);
    let svc = "src/main/kotlin/com/a/Service.kt#Service";
    for (to, why) in [
        (
            "src/main/java/com/b/Store.java#Store.save",
            "an import of a Java class",
        ),
        (
            "src/main/kotlin/com/a/Service.kt#Service.helper",
            "implicit this",
        ),
        ("src/main/kotlin/com/a/Util.kt#Util.go", "same package"),
        (
            "src/main/java/com/a/Legacy.java#Legacy.call",
            "same package, in Java",
        ),
    ] {
        assert!(
            has(&g, EdgeKind::Calls, &format!("{svc}.run"), to),
            "{why}: {to}"
        );
    }
    assert!(has(
        &g,
        EdgeKind::Implements,
        svc,
        "src/main/kotlin/com/a/Api.kt#Api"
    ));
}

#[test]
fn cpp_members_defined_out_of_line_are_their_class_members() {
    let g = graph(&[
        (
            "include/shop/cart.hpp",
            "#pragma once\n#include \"shop/price.h\"\nnamespace shop {\nclass Cart : public Priced {\n public:\n  double total() const;\n  bool blank() const { return n_ == 0; }\n private:\n  int n_ = 0;\n};\n}\n",
        ),
        (
            "src/cart.cpp",
            "#include \"shop/cart.hpp\"\nnamespace shop {\ndouble Cart::total() const {\n  if (blank()) { return 0; }\n  return round_price(n_ * 2.0);\n}\n}\n",
        ),
        (
            "include/shop/price.h",
            "namespace shop {\nclass Priced {};\ndouble round_price(double x) { return x; }\n}\n",
        ),
        (
            "src/main.cc",
            "#include \"shop/cart.hpp\"\nint main() {\n  shop::Cart cart;\n  return cart.total() > 0;\n}\n",
        ),
        // C from C++: one family.
        ("src/legacy.c", "int legacy_tax(int x) { return x; }\n"),
        (
            "src/tax.cpp",
            "extern \"C\" int legacy_tax(int x);\nint tax(int x) { return legacy_tax(x); }\n",
        ),
    ]);
    for (kind, from, to) in [
        // A receiver's type finds the out-of-line body.
        (
            EdgeKind::Calls,
            "src/main.cc#main",
            "src/cart.cpp#shop::Cart::total",
        ),
        // Implicit `this`: an inline member of the class, from an out-of-line one.
        (
            EdgeKind::Calls,
            "src/cart.cpp#shop::Cart::total",
            "include/shop/cart.hpp#shop::Cart::blank",
        ),
        (
            EdgeKind::Calls,
            "src/cart.cpp#shop::Cart::total",
            "include/shop/price.h#shop::round_price",
        ),
        (
            EdgeKind::Inherits,
            "include/shop/cart.hpp#shop::Cart",
            "include/shop/price.h#shop::Priced",
        ),
        (
            EdgeKind::Calls,
            "src/tax.cpp#tax",
            "src/legacy.c#legacy_tax",
        ),
    ] {
        assert!(
            has(&g, kind, from, to),
            "{from} → {to} ({kind:?}) missing: {:?}",
            edges(&g, kind)
        );
    }
    let imports = imports(&g);
    assert!(
        imports.contains(&("src/cart.cpp".into(), "include/shop/cart.hpp".into())),
        "{imports:?}"
    );
}

/// The files of `sources` parsed, sorted by path, as `link` takes them.
pub(super) fn parsed(sources: &[(&str, &str)]) -> Vec<std::sync::Arc<crate::model::ParsedFile>> {
    let mut files: Vec<_> = sources
        .iter()
        .map(|(path, src)| {
            let lang = crate::model::Lang::from_path(path).expect("known language");
            std::sync::Arc::new(crate::parse::parse_file(path, lang, src.as_bytes()))
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

#[test]
fn relinking_resolves_only_files_whose_interface_stayed_and_equals_a_full_link() {
    let base = "class Base:\n    def greet(self):\n        return 1\n";
    let shop = "import os\nfrom lib import helper\n\n\ndef pay(x):\n    return helper(x)\n";
    let lib = "def helper(x):\n    return x\n\n\ndef other(y):\n    return y\n";
    let prev = super::link(parsed(&[
        ("base.py", base),
        ("lib.py", lib),
        ("shop.py", shop),
    ]));
    let keep = |g: &Graph, path: &str| {
        g.files
            .iter()
            .find(|f| f.path == path)
            .cloned()
            .expect("file")
    };
    // (new shop.py, whether only files' bodies changed)
    let cases = [
        // A body edit: `pay` calls `other` instead.
        (
            "import os\nfrom lib import helper, other\n\n\ndef pay(x):\n    return other(x)\n",
            false,
        ),
        (
            "import os\nfrom lib import helper\n\n\ndef pay(x):\n    y = x * 2\n    return helper(y)\n",
            true,
        ),
        // A comment above everything moves every line, the import region's name included.
        (
            "# a note\nimport os\nfrom lib import helper\n\n\ndef pay(x):\n    return helper(x)\n",
            true,
        ),
        // A new definition, a renamed one, a new base: linked in full.
        (
            "import os\nfrom lib import helper\n\n\ndef pay(x):\n    return helper(x)\n\n\ndef refund(x):\n    return x\n",
            false,
        ),
        (
            "import os\nfrom lib import helper\n\n\ndef charge(x):\n    return helper(x)\n",
            false,
        ),
        (
            "import os\nfrom lib import helper\nfrom base import Base\n\n\nclass Pay(Base):\n    pass\n",
            false,
        ),
    ];
    for (src, body_only) in cases {
        let mut files = parsed(&[("shop.py", src)]);
        files.push(keep(&prev, "base.py"));
        files.push(keep(&prev, "lib.py"));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(
            matches!(
                super::relink::classify(&prev, &files),
                super::relink::Change::Bodies(_)
            ),
            body_only,
            "{src}"
        );
        let relinked = super::relink(&prev, files.clone());
        assert!(relinked == super::link(files), "{src}");
        if body_only {
            assert!(!edges(&relinked, EdgeKind::Calls).is_empty(), "{src}");
        }
    }
}

/// A name defined only in another file's tests is no target for code outside tests: there the
/// real definition is outside the repository (or a local the parser does not see).
#[test]
fn code_outside_tests_never_resolves_to_another_files_test_helper() {
    let g = graph(&[
        (
            "crates/ignore/src/lib.rs",
            "pub fn walk() {}\n\n#[cfg(test)]\nmod tests {\n    fn err(msg: &str) -> String { msg.into() }\n    #[test]\n    fn t() { err(\"x\"); }\n}\n",
        ),
        (
            "crates/printer/src/hyperlink.rs",
            "pub fn parse() -> Result<(), String> { Err(err(\"bad\")) }\n",
        ),
        (
            "crates/printer/tests/hyperlink.rs",
            "#[test]\nfn parses() { let _ = err(\"x\"); }\n",
        ),
    ]);
    let helper = "crates/ignore/src/lib.rs#tests::err";
    let calls = edges(&g, EdgeKind::Calls);
    assert!(
        !has(
            &g,
            EdgeKind::Calls,
            "crates/printer/src/hyperlink.rs#parse",
            helper
        ),
        "{calls:?}"
    );
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "crates/ignore/src/lib.rs#tests::t",
            helper
        ),
        "{calls:?}"
    );
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "crates/printer/tests/hyperlink.rs#parses",
            helper
        ),
        "{calls:?}"
    );
}

/// `Config::default()` with no `Config` imported means the `Config` in scope: this file's, else
/// this crate's — not every `Config` of the workspace.
#[test]
fn an_unimported_type_path_means_the_type_in_scope() {
    let g = graph(&[
        (
            "crates/printer/src/path.rs",
            "struct Config { x: u8 }\nimpl Default for Config { fn default() -> Config { Config { x: 0 } } }\npub fn build() { let _ = Config::default(); }\n",
        ),
        (
            "crates/searcher/src/config.rs",
            "pub struct Config { y: u8 }\nimpl Default for Config { fn default() -> Config { Config { y: 1 } } }\n",
        ),
        (
            "crates/searcher/src/lib.rs",
            "pub fn make() { let _ = Config::default(); }\n",
        ),
    ]);
    let calls = edges(&g, EdgeKind::Calls);
    let to = |from: &str| -> Vec<&str> {
        calls
            .iter()
            .filter(|(f, _)| f == from)
            .map(|(_, t)| t.as_str())
            .collect()
    };
    assert_eq!(
        to("crates/printer/src/path.rs#build"),
        ["crates/printer/src/path.rs#Config::default"],
        "{calls:?}"
    );
    assert_eq!(
        to("crates/searcher/src/lib.rs#make"),
        ["crates/searcher/src/config.rs#Config::default"],
        "{calls:?}"
    );
}

/// `io::Error::from(e)` with `use std::io;`, or `std::io::Error::from(e)`, is std's, not the
/// repository's own `Error::from`.
#[test]
fn a_path_through_an_external_module_is_not_the_repositorys_type() {
    let g = graph(&[(
        "src/lib.rs",
        "use std::io;\npub enum Error { Io(io::Error) }\nimpl From<io::Error> for Error { fn from(e: io::Error) -> Error { Error::Io(e) } }\n\
         pub fn a(e: io::ErrorKind) -> io::Error { io::Error::from(e) }\n\
         pub fn b(e: std::io::ErrorKind) -> std::io::Error { std::io::Error::from(e) }\n\
         pub fn c(e: io::Error) -> Error { Error::from(e) }\n",
    )]);
    let calls = edges(&g, EdgeKind::Calls);
    let from = "src/lib.rs#Error::from";
    assert!(!has(&g, EdgeKind::Calls, "src/lib.rs#a", from), "{calls:?}");
    assert!(!has(&g, EdgeKind::Calls, "src/lib.rs#b", from), "{calls:?}");
    assert!(has(&g, EdgeKind::Calls, "src/lib.rs#c", from), "{calls:?}");
}

/// `self.field.m()` calls a member of the field's declared type, even when another type
/// defines a method of the same name; the struct may come after the impl.
#[test]
fn a_call_on_a_field_of_self_resolves_through_the_fields_type() {
    let g = graph(&[
        (
            "src/literal.rs",
            "impl Literals {\n    fn merge(&mut self, o: Literals) {\n        self.exact.union(o.exact);\n    }\n}\n\
             pub struct Literals { exact: LiteralSet, other: Vec<u8> }\n\
             pub struct LiteralSet;\nimpl LiteralSet { pub fn union(&mut self, o: LiteralSet) {} }\n",
        ),
        (
            "src/set.rs",
            "pub struct ByteSet;\nimpl ByteSet { pub fn union(&mut self, o: ByteSet) {} }\n",
        ),
    ]);
    let calls = edges(&g, EdgeKind::Calls);
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "src/literal.rs#Literals::merge",
            "src/literal.rs#LiteralSet::union"
        ),
        "{calls:?}"
    );
    assert!(!has(
        &g,
        EdgeKind::Calls,
        "src/literal.rs#Literals::merge",
        "src/set.rs#ByteSet::union"
    ));
}

/// TypeScript merges `interface make` with `function make`; a call means the function, and
/// a type annotation the interface.
#[test]
fn a_call_means_the_function_an_interface_of_the_same_name_merges_with() {
    let g = graph(&[
        (
            "src/core.ts",
            "export interface make<T> { value: T }\n\
             export function make<T>(name: string): make<T> { return { value: name } as any; }\n",
        ),
        (
            "src/use.ts",
            "import * as core from \"./core\";\n\
             export function build(): core.make<string> { return core.make(\"a\"); }\n",
        ),
    ]);
    let calls: Vec<_> = g
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls && g.def(e.from).name == "build")
        .map(|e| g.def(e.to).kind)
        .collect();
    assert_eq!(
        calls,
        vec![crate::model::DefKind::Function],
        "{:?}",
        edges(&g, EdgeKind::Calls)
    );
}

const BUILDER: &str = "pub struct Builder { only: bool }\n\
impl Builder {\n    pub fn new() -> Builder { Builder { only: false } }\n    \
pub fn only(&mut self, yes: bool) -> &mut Builder { self.only = yes; self }\n    \
pub fn wide(&mut self) -> &mut Self { self }\n    \
pub fn build(&self) -> Printer { Printer }\n}\n\
pub struct Printer;\nimpl Printer { pub fn print(&self) {} }\n\
pub struct Other;\nimpl Other {\n    pub fn only(&mut self, yes: bool) -> &mut Other { self }\n    \
pub fn print(&self) {}\n    pub fn build(&self) -> Other { Other }\n}\n";

const MAIN: &str = "use crate::builder::Builder;\n\
pub fn run() {\n    Builder::new()\n        .wide()\n        .only(true)\n        .build()\n        .print();\n}\n\
pub fn again() {\n    let mut b = Builder::new();\n    b.wide().only(false);\n}\n";

/// A call at the end of a chain (`Builder::new().wide().only(true).build().print()`) resolves
/// through the types its links return, though two types define each method's name.
#[test]
fn a_chain_of_calls_resolves_through_the_types_its_links_return() {
    let g = graph(&[("src/builder.rs", BUILDER), ("src/main.rs", MAIN)]);
    let calls = edges(&g, EdgeKind::Calls);
    let from = "src/main.rs#run";
    for to in [
        "Builder::new",
        "Builder::wide",
        "Builder::only",
        "Builder::build",
        "Printer::print",
    ] {
        assert!(
            has(&g, EdgeKind::Calls, from, &format!("src/builder.rs#{to}")),
            "{to}: {calls:?}"
        );
    }
    for to in ["Other::only", "Other::print", "Other::build"] {
        assert!(
            !has(&g, EdgeKind::Calls, from, &format!("src/builder.rs#{to}")),
            "{to}: {calls:?}"
        );
    }
    // A chain may start at a variable whose type the parser knows.
    let again = "src/main.rs#again";
    let only = |ty: &str| {
        has(
            &g,
            EdgeKind::Calls,
            again,
            &format!("src/builder.rs#{ty}::only"),
        )
    };
    assert!(only("Builder") && !only("Other"), "{calls:?}");
}

/// A changed return type changes what a chain elsewhere resolves to: the update relinks the
/// files whose chains name the method, and equals a full link.
#[test]
fn a_changed_return_type_relinks_the_chains_through_it() {
    let prev = super::link(parsed(&[
        ("src/builder.rs", BUILDER),
        ("src/main.rs", MAIN),
    ]));
    let changed = BUILDER.replace(
        "pub fn wide(&mut self) -> &mut Self { self }",
        "pub fn wide(&mut self) -> &mut Other { todo!() }",
    );
    let mut files = parsed(&[("src/builder.rs", &changed)]);
    files.push(
        prev.files
            .iter()
            .find(|f| f.path == "src/main.rs")
            .cloned()
            .expect("main.rs"),
    );
    files.sort_by(|a, b| a.path.cmp(&b.path));
    assert!(!matches!(
        super::relink::classify(&prev, &files),
        super::relink::Change::Bodies(_)
    ));
    let relinked = super::relink(&prev, files.clone());
    assert!(has(
        &relinked,
        EdgeKind::Calls,
        "src/main.rs#run",
        "src/builder.rs#Other::only"
    ));
    assert!(relinked == super::link(files));
}

/// A monorepo imports its own packages by name (`kit`, `kit/v4`, `@acme/kit`): the name
/// resolves to the `src` tree of the directory named like the package. A name two package
/// directories claim, and a package from outside the repository, resolve to nothing.
#[test]
fn bare_imports_of_a_monorepos_own_packages_resolve_to_their_sources() {
    let g = graph(&[
        (
            "packages/kit/src/index.ts",
            "export function string() { return 1; }\n",
        ),
        (
            "packages/kit/src/v4/index.ts",
            "export function object() { return 2; }\n",
        ),
        (
            "packages/core/src/index.ts",
            "export function shared() { return 3; }\n",
        ),
        (
            "tools/core/src/index.ts",
            "export function shared() { return 4; }\n",
        ),
        (
            "packages/app/src/main.ts",
            "import * as k from \"kit\";\nimport { object } from \"kit/v4.js\";\n\
             import { string as s } from \"@acme/kit\";\nimport { shared } from \"core\";\n\
             import { describe } from \"vitest\";\n\
             export function run() { k.string(); object(); s(); shared(); describe(); }\n",
        ),
    ]);
    let calls = edges(&g, EdgeKind::Calls);
    let run = "packages/app/src/main.ts#run";
    assert!(
        has(&g, EdgeKind::Calls, run, "packages/kit/src/index.ts#string"),
        "{calls:?}"
    );
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            run,
            "packages/kit/src/v4/index.ts#object"
        ),
        "{calls:?}"
    );
    let shared = calls
        .iter()
        .filter(|(f, t)| f == run && t.ends_with("#shared"))
        .count();
    assert_eq!(shared, 0, "{calls:?}");
}
