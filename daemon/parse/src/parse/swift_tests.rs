//! Swift parsing: definitions, extensions, modules by target directory, imports, references.

use super::parse_file;
use super::swift::module_of;
use super::tests::{find, has_ref, outline};
use crate::model::{DefKind, Lang, RefKind};

const SESSION: &str = r#"import Foundation
@testable import Networking

/// A session that performs requests.
open class Session: NSObject, SessionProtocol {
    public static let shared = Session()
    let rootQueue: DispatchQueue
    private let adapter: RequestAdapter?
    var requests: [Request] = []

    public init(rootQueue: DispatchQueue = .main) {
        self.rootQueue = rootQueue
        super.init()
    }

    /// Starts a request.
    @discardableResult
    open func request(_ convertible: URLConvertible, method: HTTPMethod = .get) -> DataRequest {
        let request = DataRequest(convertible: convertible)
        perform(request)
        self.adapter?.adapt(request)
        rootQueue.async { self.finish() }
        Helpers.log("x")
        convertible.asURL()
        return request
    }

    func perform(_ request: Request) {}
    private func finish() {}
}

extension Session: CustomDebugStringConvertible, Loggable {
    func extra() -> Int { 1 }
}

public protocol SessionProtocol: AnyObject {
    func request(_ convertible: URLConvertible) -> DataRequest
}

struct Point<T: Numeric> { var x: T }
enum HTTPMethod: String {
    case get, post
    func lower() -> String { rawValue.lowercased() }
}
typealias Handler = (Request) -> Void
let defaultTimeout = 60
func topLevel(a: Int) -> Int { a }
actor Counter { func inc() {} }
final class Upload: Session {}
"#;

#[test]
fn swift_definitions_extensions_and_qualified_names() {
    let f = parse_file(
        "Sources/Networking/Session.swift",
        Lang::Swift,
        SESSION.as_bytes(),
    );
    assert_eq!(f.package.as_deref(), Some("Networking"));
    let names: Vec<(DefKind, String)> = outline(&f).into_iter().map(|o| (o.0, o.1)).collect();
    for expected in [
        (DefKind::Class, "Session"),
        (DefKind::Constant, "Session.shared"),
        (DefKind::Constructor, "Session.Session"),
        (DefKind::Method, "Session.request"),
        (DefKind::Method, "Session.perform"),
        (DefKind::Impl, "Session"),
        (DefKind::Method, "Session.extra"),
        (DefKind::Interface, "SessionProtocol"),
        (DefKind::Method, "SessionProtocol.request"),
        (DefKind::Struct, "Point"),
        (DefKind::Enum, "HTTPMethod"),
        (DefKind::Method, "HTTPMethod.lower"),
        (DefKind::TypeAlias, "Handler"),
        (DefKind::Constant, "defaultTimeout"),
        (DefKind::Function, "topLevel"),
        (DefKind::Class, "Counter"),
        (DefKind::Method, "Counter.inc"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    // Instance properties are not constants.
    assert!(
        !names.iter().any(|n| n.1 == "Session.rootQueue"),
        "{names:?}"
    );
    assert_eq!(
        f.definitions
            .iter()
            .find(|d| d.qualified_name == "Session" && d.kind == DefKind::Class)
            .and_then(|d| d.doc.as_deref()),
        Some("A session that performs requests.")
    );
    assert_eq!(
        find(&f, "Session.request").doc.as_deref(),
        Some("Starts a request.")
    );
}

#[test]
fn swift_imports_conformances_and_calls_with_receivers() {
    let f = parse_file(
        "Sources/Networking/Session.swift",
        Lang::Swift,
        SESSION.as_bytes(),
    );
    assert!(
        f.imports
            .iter()
            .any(|i| i.module == "Networking" && i.wildcard),
        "{:?}",
        f.imports
    );
    assert!(
        has_ref(&f, RefKind::Inherits, None, "Session"),
        "a base class"
    );
    assert!(has_ref(&f, RefKind::Implements, None, "SessionProtocol"));
    assert!(
        has_ref(&f, RefKind::Implements, None, "Loggable"),
        "an extension's"
    );
    assert!(has_ref(&f, RefKind::Type, None, "URLConvertible"));
    assert!(
        has_ref(&f, RefKind::Type, None, "RequestAdapter"),
        "inside an optional"
    );
    assert!(
        has_ref(&f, RefKind::Call, None, "DataRequest"),
        "construction"
    );
    assert!(has_ref(&f, RefKind::Call, None, "perform"));
    assert!(has_ref(&f, RefKind::Call, Some("self.adapter"), "adapt"));
    assert!(has_ref(&f, RefKind::Call, Some("self"), "finish"));
    assert!(has_ref(&f, RefKind::Call, Some("Helpers"), "log"));
    assert!(!has_ref(&f, RefKind::Type, None, "T"), "a type parameter");
    assert!(
        has_ref(&f, RefKind::Type, None, "Numeric"),
        "its constraint"
    );
    let recv_ty = |name: &str| {
        f.references
            .iter()
            .find(|r| r.name == name && r.kind == RefKind::Call)
            .and_then(|r| r.receiver_type)
    };
    assert_eq!(recv_ty("adapt"), Some("RequestAdapter"));
    assert_eq!(recv_ty("asURL"), Some("URLConvertible"));
}

#[test]
fn swift_modules_test_paths_and_broken_code() {
    assert_eq!(
        module_of("Sources/ArgumentParser/Parsing/Parser.swift"),
        "ArgumentParser"
    );
    assert_eq!(
        module_of("Tests/ArgumentParserUnitTests/ParserTests.swift"),
        "ArgumentParserUnitTests"
    );
    assert_eq!(module_of("Source/Core/Session.swift"), "Source");
    assert_eq!(module_of("Package.swift"), "");
    assert!(crate::model::is_test_path(
        "Tests/ArgumentParserUnitTests/ParserTests.swift"
    ));
    assert!(crate::model::is_test_path("Source/SessionTests.swift"));
    assert!(!crate::model::is_test_path(
        "Sources/ArgumentParser/Parser.swift"
    ));
    let src = "class B {\n  func f() { g( }\n  func h() -> Int { 1 }\n}\n";
    let f = parse_file("Sources/A/B.swift", Lang::Swift, src.as_bytes());
    assert!(!f.diagnostics.is_empty());
    assert!(
        f.definitions.iter().any(|d| d.qualified_name == "B.h"),
        "{:#?}",
        outline(&f)
    );
}

#[test]
fn a_package_manifest_declares_its_targets_directories() {
    let src = r#"// swift-tools-version:5.9
import PackageDescription
let package = Package(name: "Alamofire",
    targets: [.target(name: "Alamofire", path: "Source", exclude: ["Info.plist"]),
              .testTarget(name: "AlamofireTests", dependencies: ["Alamofire"], path: "Tests"),
              .executableTarget(name: "Tool")])
"#;
    let f = parse_file("Package.swift", Lang::Swift, src.as_bytes());
    assert_eq!(
        f.targets,
        vec![
            ("Alamofire".to_string(), "Source".to_string()),
            ("AlamofireTests".to_string(), "Tests".to_string()),
            ("Tool".to_string(), "Sources/Tool".to_string()),
        ]
    );
    let nested = parse_file("tools/Package@swift-6.0.swift", Lang::Swift, src.as_bytes());
    assert_eq!(
        nested.targets[0],
        ("Alamofire".to_string(), "tools/Source".to_string())
    );
    // Anywhere else, `.target(…)` is just a call.
    let other = parse_file("Sources/A/Build.swift", Lang::Swift, src.as_bytes());
    assert!(other.targets.is_empty());
}

#[test]
fn a_computed_property_is_a_member_like_a_method() {
    let src = "public class Maker {\n    public var edges: Extendable {\n        return self.make(.edges)\n    }\n    var plain: Int = 3\n}\n\nextension Maker {\n    public var directionalEdges: Extendable {\n        get { return self.make(.directional) }\n    }\n}\n\nvar version: String { \"1\" }\n";
    let f = parse_file("Sources/Maker.swift", Lang::Swift, src.as_bytes());
    let edges = find(&f, "Maker.edges");
    assert_eq!(
        (edges.kind, edges.start_line, edges.end_line),
        (DefKind::Method, 2, 4)
    );
    let directional = find(&f, "Maker.directionalEdges");
    assert_eq!(directional.kind, DefKind::Method);
    assert_eq!(find(&f, "version").kind, DefKind::Function);
    // A stored property stays part of its type's fields.
    assert!(
        !f.definitions.iter().any(|d| d.name == "plain"),
        "{:#?}",
        outline(&f)
    );
    assert!(has_ref(&f, RefKind::Call, Some("self"), "make"));
}
