//! Cross-file resolution through JavaScript's module exports: CommonJS `module.exports` and
//! `exports.x`, ES `export default` and local `export { a as b }`.

use super::EdgeKind;
use super::tests::has;
use crate::testing::graph_of as graph;

#[test]
fn calls_reach_what_a_module_exports_as_a_whole_or_under_another_name() {
    let g = graph(&[
        ("index.js", "module.exports = require('./lib/app');\n"),
        (
            "lib/app.js",
            "var View = require('./view');\n\
             exports = module.exports = createApplication;\n\
             function createApplication() { return new View(); }\n\
             exports.renamed = inner;\n\
             function inner() {}\n\
             exports.view = require('./view');\n",
        ),
        (
            "lib/view.js",
            "function View() {}\nView.prototype.render = function render() {};\nmodule.exports = View;\n",
        ),
        (
            "lib/parse.js",
            "module.exports = function parse(s) { return s; };\n",
        ),
        (
            "lib/es.js",
            "function build() {}\nexport default build;\nfunction a() {}\nexport { a as b };\n",
        ),
        (
            "lib/tools.js",
            "function trim() {}\nfunction pad() {}\nmodule.exports = { trim, padStart: pad };\n",
        ),
        (
            "test/app.test.js",
            "var express = require('../');\nvar parse = require('../lib/parse');\n\
             var tools = require('../lib/tools');\n\
             import build from '../lib/es';\nimport { b } from '../lib/es';\n\
             function run() {\n  express();\n  express.renamed();\n  new express.view();\n  \
             parse('x');\n  build();\n  b();\n  tools.trim();\n  tools.padStart();\n}\n",
        ),
    ]);
    let run = "test/app.test.js#run";
    for (to, why) in [
        (
            "lib/app.js#createApplication",
            "module.exports = f, through index.js's require",
        ),
        ("lib/app.js#inner", "exports.renamed = inner"),
        (
            "lib/view.js#View",
            "exports.view = require('./view'), a class exported whole",
        ),
        ("lib/parse.js#parse", "module.exports = function parse"),
        ("lib/es.js#build", "export default build"),
        ("lib/es.js#a", "export { a as b }"),
        ("lib/tools.js#trim", "module.exports = { trim }"),
        ("lib/tools.js#pad", "module.exports = { padStart: pad }"),
    ] {
        let calls = super::tests::edges(&g, EdgeKind::Calls);
        assert!(
            has(&g, EdgeKind::Calls, run, to),
            "{why}: {to} not in {calls:?}"
        );
    }
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "lib/app.js#createApplication",
            "lib/view.js#View"
        ),
        "a required module's whole export, constructed"
    );
    // Own exports are not imports: nothing to resolve, nothing counted.
    let imports: u32 = g.stats.iter().map(|s| s.imports).sum();
    assert_eq!(imports, 8, "{:?}", g.stats);
}
