use super::*;
use crate::testing::temp_repo;

/// A repository whose edges are known: `send` is called by `request` (through `self`) and
/// by `get` (through an import), used as a type nowhere; `Adapter.send` shares its name;
/// `conn.send()` on an untyped receiver resolves to neither.
fn engine() -> Engine {
    // One folder per call: the tests run in parallel in one process.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = temp_repo(
        &format!("navigate-{n}"),
        &[
            (
                "pkg/sessions.py",
                "from pkg.util import merge\n\n\nclass Session:\n    def request(self, method, url):\n        prepared = merge(method, url)\n        return self.send(prepared)\n\n    def send(self, prepared):\n        return prepared\n",
            ),
            (
                "pkg/api.py",
                "from pkg.sessions import Session\n\n\ndef get(url):\n    session = Session()\n    return session.request('GET', url)\n\n\ndef head(url):\n    return get(url)\n",
            ),
            (
                "pkg/util.py",
                "def merge(a, b):\n    return (a, b)\n\n\ndef flatten(xs):\n    return [y for x in xs for y in flatten(x)]\n",
            ),
            (
                "pkg/adapters.py",
                "class Adapter:\n    def send(self, request):\n        return request\n\n\ndef relay(conn, request):\n    return conn.send(request)\n",
            ),
        ],
    );
    Engine::open(&dir, Default::default()).expect("engine")
}

fn nav(e: &Engine, target: &str, direction: Direction) -> crate::render::Answer {
    e.navigate(&Navigation::new(target, direction))
        .unwrap_or_else(|err| panic!("{target}: {err}"))
}

fn shown(a: &crate::render::Answer) -> Vec<String> {
    a.nodes.iter().map(|n| n.name.clone()).collect()
}

#[test]
fn callers_show_each_site_with_the_referring_line_marked() {
    let e = engine();
    let a = nav(&e, "Session.request", Direction::Callers);
    assert_eq!(shown(&a), ["get"], "{}", a.text);
    assert!(
        a.text
            .contains("6 ▶\t    return session.request('GET', url)"),
        "{}",
        a.text
    );
    assert!(a.text.contains("by receiver type"), "{}", a.text);
    let a = nav(&e, "get", Direction::Callers);
    assert_eq!(shown(&a), ["head"]);
    assert!(a.text.contains("in scope"), "{}", a.text);
}

#[test]
fn a_shared_name_answers_the_best_candidate_and_lists_the_others() {
    let e = engine();
    let a = nav(&e, "send", Direction::Callers);
    assert!(a.text.contains("Also named `send` (1 more"), "{}", a.text);
    assert_eq!(shown(&a), ["Session.request"], "{}", a.text);
    // The untyped `conn.send(request)` is named, not guessed.
    assert!(
        a.text.contains("pkg/adapters.py:7 `conn.send`"),
        "{}",
        a.text
    );
    // An id picks one candidate.
    let a = nav(&e, "pkg/adapters.py#Adapter.send", Direction::Callers);
    assert!(a.nodes.is_empty(), "{}", a.text);
}

#[test]
fn callees_show_the_target_then_what_it_calls_in_order() {
    let e = engine();
    let a = nav(&e, "Session.request", Direction::Callees);
    assert_eq!(
        shown(&a),
        ["Session.request", "merge", "Session.send"],
        "{}",
        a.text
    );
    assert!(
        a.text
            .contains("6 ▶\t        prepared = merge(method, url)"),
        "{}",
        a.text
    );
}

#[test]
fn impact_walks_callers_transitively_nearest_first() {
    let e = engine();
    let mut n = Navigation::new("merge", Direction::Impact);
    n.depth = 3;
    let a = e.navigate(&n).unwrap();
    assert_eq!(shown(&a), ["Session.request", "get", "head"], "{}", a.text);
    assert!(a.text.contains("(step 3)"), "{}", a.text);
    n.depth = 1;
    assert_eq!(shown(&e.navigate(&n).unwrap()), ["Session.request"]);
}

#[test]
fn references_include_type_uses_and_instantiation() {
    let e = engine();
    let a = nav(&e, "Session", Direction::References);
    assert_eq!(shown(&a), ["get"], "{}", a.text);
}

#[test]
fn a_path_and_line_names_the_innermost_definition() {
    let e = engine();
    let a = nav(&e, "pkg/sessions.py:10", Direction::Callers);
    assert!(
        a.text.contains("Target: method `Session.send`"),
        "{}",
        a.text
    );
    assert_eq!(
        e.navigate(&Navigation::new("pkg/sessions.py:99", Direction::Callers))
            .unwrap_err(),
        NavigateError::NoLine {
            path: "pkg/sessions.py".into(),
            line: 99,
            lines: 10
        }
    );
    assert!(matches!(
        e.navigate(&Navigation::new("no_such_thing", Direction::Callers)),
        Err(NavigateError::NoTarget(_))
    ));
}

#[test]
fn every_budget_holds_and_what_does_not_fit_is_pointed_to() {
    let e = engine();
    for budget in [200, 260, 400, 1000] {
        let mut n = Navigation::new("merge", Direction::Impact);
        n.budget = budget;
        let a = e.navigate(&n).unwrap();
        assert!(
            a.tokens <= budget,
            "{budget}: {} tokens\n{}",
            a.tokens,
            a.text
        );
        assert_eq!(a.nodes.len() + a.pointers.len(), 3, "{budget}");
    }
}

#[test]
fn a_navigation_question_to_query_gets_a_navigation_answer() {
    let e = engine();
    let a = e.query(&crate::Query {
        question: "who calls Session.request?".into(),
        budget: 2000,
        ..Default::default()
    });
    assert!(
        a.text.contains("callers of `Session.request`"),
        "{}",
        a.text
    );
    // A name nothing defines: an ordinary answer.
    let a = e.query(&crate::Query {
        question: "who calls nobody_defines_this".into(),
        budget: 2000,
        ..Default::default()
    });
    assert!(!a.text.contains("callers of"), "{}", a.text);
}

#[test]
fn a_recursive_call_makes_the_target_its_own_caller_and_callee() {
    let e = engine();
    let a = nav(&e, "flatten", Direction::Callers);
    assert_eq!(shown(&a), ["flatten"], "{}", a.text);
    assert!(
        a.text
            .contains("6 ▶\t    return [y for x in xs for y in flatten(x)]"),
        "{}",
        a.text
    );
    let a = nav(&e, "flatten", Direction::Callees);
    assert_eq!(shown(&a), ["flatten", "flatten"], "{}", a.text);
}

#[test]
fn callers_of_an_override_include_calls_of_the_method_it_overrides() {
    let dir = temp_repo(
        "navigate-dispatch",
        &[(
            "jobs.py",
            "class Job:\n    def run(self):\n        return None\n\n    def start(self):\n        return self.run()\n\n\nclass Backup(Job):\n    def run(self):\n        return 'copied'\n",
        )],
    );
    let e = Engine::open(&dir, Default::default()).expect("engine");
    let a = nav(&e, "Backup.run", Direction::Callers);
    assert_eq!(shown(&a), ["Job.start"], "{}", a.text);
    assert!(
        a.text.contains("`Job.run`") && a.text.contains("dynamic dispatch"),
        "{}",
        a.text
    );
    // The base method's own callers are direct.
    let a = nav(&e, "Job.run", Direction::Callers);
    assert_eq!(shown(&a), ["Job.start"], "{}", a.text);
    assert!(!a.text.contains("dynamic dispatch"), "{}", a.text);
}

#[test]
fn a_call_resolved_to_several_definitions_is_shown_as_possible_after_the_certain_ones() {
    let dir = temp_repo(
        "navigate-shared",
        &[
            (
                "compat.py",
                "import sys\n\nif sys.version_info >= (3, 11):\n    def load(text):\n        return text\nelse:\n    def load(text):\n        return text.strip()\n",
            ),
            (
                "app.py",
                "from compat import load\n\n\ndef read(path):\n    return load(open(path).read())\n",
            ),
            (
                "local.py",
                "def load(x):\n    return x\n\n\ndef run():\n    return load(1)\n",
            ),
        ],
    );
    let e = Engine::open(&dir, Default::default()).expect("engine");
    let a = nav(&e, "compat.py:4", Direction::Callers);
    assert_eq!(shown(&a), ["read"], "{}", a.text);
    assert!(
        a.text
            .contains("may call another: the name resolved to 2 definitions"),
        "{}",
        a.text
    );
    let a = nav(&e, "local.py#load", Direction::Callers);
    assert_eq!(shown(&a), ["run"], "{}", a.text);
    assert!(!a.text.contains("may call another"), "{}", a.text);
}

#[test]
fn a_preamble_too_long_for_the_budget_is_cut_to_what_the_target_is() {
    let many: String = (0..40)
        .map(|i| {
            format!(
                "class Transport{i}:\n    def send(self, request, timeout_seconds_for_the_whole_exchange, retries_before_giving_up, backoff_factor):\n        return request\n\n\n"
            )
        })
        .collect();
    let dir = temp_repo("navigate-brief", &[("transports.py", &many)]);
    let e = Engine::open(&dir, Default::default()).expect("engine");
    for budget in [200, 300] {
        let mut n = Navigation::new("send", Direction::Callers);
        n.budget = budget;
        let a = e.navigate(&n).unwrap();
        assert!(a.tokens <= budget, "{budget}: {}\n{}", a.tokens, a.text);
        assert!(a.text.contains("send"), "{}", a.text);
    }
}

#[test]
fn a_call_on_an_untyped_receiver_linked_by_a_unique_name_is_only_possible() {
    let dir = temp_repo(
        "navigate-guess",
        &[
            (
                "probe.py",
                "class Probe:\n    def ping(self):\n        return 1\n\n    def twice(self):\n        return self.ping() + 1\n",
            ),
            (
                "use.py",
                "def check(conn):\n    return conn.ping()\n\n\ndef fresh(make):\n    return make().ping()\n",
            ),
        ],
    );
    let e = Engine::open(&dir, Default::default()).expect("engine");
    let a = nav(&e, "Probe.ping", Direction::Callers);
    let names = shown(&a);
    assert_eq!(names[0], "Probe.twice", "{}", a.text);
    assert!(
        names.contains(&"check".to_string()) && names.contains(&"fresh".to_string()),
        "{}",
        a.text
    );
    assert!(
        a.text
            .contains("fresh — calls at 6 (by unique name) (may call another"),
        "{}",
        a.text
    );
    assert!(
        a.text.contains(
            "check — calls at 2 (by unique name) (may call another: the receiver's type is unknown"
        ),
        "{}",
        a.text
    );
}
