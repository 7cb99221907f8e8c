//! PHP parsing: definitions, qualified names, namespaces, `use` imports, references.

use super::parse_file;
use super::tests::{find, has_ref, outline};
use crate::model::{DefKind, Lang, RefKind};

const INSTALLER: &str = r#"<?php

declare(strict_types=1);

namespace Composer\Installer;

use Composer\IO\IOInterface;
use Composer\Package\{PackageInterface, AliasPackage as AP};
use function Composer\fn_helper;

/**
 * Installs packages into the vendor directory.
 */
final class LibraryInstaller extends BaseInstaller implements InstallerInterface, BinaryPresenceInterface
{
    use LoggerTrait;

    public const VERSION = '1.0';
    private IOInterface $io;

    public function __construct(IOInterface $io, private ?Filesystem $fs = null)
    {
        $this->io = $io;
        $this->downloads = new DownloadManager();
        parent::__construct();
    }

    /** Installs one package. */
    public function install(PackageInterface $package): void
    {
        $this->io->write('x');
        $this->fs->remove($package);
        $this->helper($package);
        self::staticOne();
        static::other();
        Util::normalize($package->getName());
        $this->downloads->download($package);
        fn_helper();
        strlen('x');
        $x = new AP($package);
        $x->getAliasOf();
        $class = Factory::class;
    }

    private static function staticOne(): int { return 1; }
}

interface InstallerInterface { public function install(PackageInterface $p): void; }
trait LoggerTrait { public function log(string $m): void {} }
enum Suit: string { case Hearts = 'H'; public function label(): string { return 'x'; } }
function top_level(int $a): int { return $a; }
const FOO = 1;
"#;

#[test]
fn php_definitions_namespaces_and_qualified_names() {
    let f = parse_file(
        "src/Composer/Installer/LibraryInstaller.php",
        Lang::Php,
        INSTALLER.as_bytes(),
    );
    assert_eq!(f.package.as_deref(), Some("Composer.Installer"));
    let names: Vec<(DefKind, String)> = outline(&f).into_iter().map(|o| (o.0, o.1)).collect();
    for expected in [
        (DefKind::Class, "LibraryInstaller"),
        (DefKind::Constructor, "LibraryInstaller::LibraryInstaller"),
        (DefKind::Method, "LibraryInstaller::install"),
        (DefKind::Method, "LibraryInstaller::staticOne"),
        (DefKind::Constant, "LibraryInstaller::VERSION"),
        (DefKind::Interface, "InstallerInterface"),
        (DefKind::Method, "InstallerInterface::install"),
        (DefKind::Trait, "LoggerTrait"),
        (DefKind::Enum, "Suit"),
        (DefKind::Method, "Suit::label"),
        (DefKind::Function, "top_level"),
        (DefKind::Constant, "FOO"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    assert_eq!(
        find(&f, "LibraryInstaller").doc.as_deref(),
        Some("Installs packages into the vendor directory.")
    );
    assert!(
        find(&f, "LibraryInstaller::install")
            .signature
            .starts_with("public function install(PackageInterface $package): void"),
        "{}",
        find(&f, "LibraryInstaller::install").signature
    );
}

#[test]
fn php_use_imports_supertypes_and_calls_with_receivers() {
    let f = parse_file(
        "src/Composer/Installer/LibraryInstaller.php",
        Lang::Php,
        INSTALLER.as_bytes(),
    );
    let named = |m: &str, n: &str, a: &str| {
        f.imports
            .iter()
            .any(|i| i.module == m && i.names.contains(&(n.to_string(), a.to_string())))
    };
    assert!(
        named("Composer.IO.IOInterface", "IOInterface", "IOInterface"),
        "{:?}",
        f.imports
    );
    assert!(named(
        "Composer.Package.PackageInterface",
        "PackageInterface",
        "PackageInterface"
    ));
    assert!(named("Composer.Package.AliasPackage", "AliasPackage", "AP"));
    assert!(named("Composer.fn_helper", "fn_helper", "fn_helper"));

    assert!(has_ref(&f, RefKind::Inherits, None, "BaseInstaller"));
    assert!(has_ref(&f, RefKind::Implements, None, "InstallerInterface"));
    assert!(has_ref(
        &f,
        RefKind::Implements,
        None,
        "BinaryPresenceInterface"
    ));
    assert!(
        has_ref(&f, RefKind::Inherits, None, "LoggerTrait"),
        "a used trait"
    );
    assert!(has_ref(&f, RefKind::Type, None, "PackageInterface"));
    assert!(has_ref(&f, RefKind::Call, Some("this.io"), "write"));
    assert!(has_ref(&f, RefKind::Call, Some("this"), "helper"));
    assert!(has_ref(&f, RefKind::Call, Some("self"), "staticOne"));
    assert!(
        has_ref(&f, RefKind::Call, Some("self"), "other"),
        "static::"
    );
    assert!(
        has_ref(&f, RefKind::Call, Some("super"), "__construct"),
        "parent::"
    );
    assert!(has_ref(&f, RefKind::Call, Some("Util"), "normalize"));
    assert!(has_ref(&f, RefKind::Call, Some("package"), "getName"));
    assert!(has_ref(&f, RefKind::Call, None, "fn_helper"));
    assert!(has_ref(&f, RefKind::Call, None, "DownloadManager"), "new");
    assert!(
        has_ref(&f, RefKind::Type, None, "Factory"),
        "Factory::class"
    );
    assert!(!has_ref(&f, RefKind::Call, None, "strlen"), "a builtin");
    // Receiver types: a typed property, a promoted constructor parameter, an assignment of
    // `new` to a property and to a local, a parameter.
    let recv_ty = |name: &str| {
        f.references
            .iter()
            .find(|r| r.name == name && r.kind == RefKind::Call)
            .and_then(|r| r.receiver_type)
    };
    assert_eq!(recv_ty("write"), Some("IOInterface"));
    assert_eq!(recv_ty("remove"), Some("Filesystem"));
    assert_eq!(recv_ty("download"), Some("DownloadManager"));
    assert_eq!(recv_ty("getAliasOf"), Some("AP"));
    assert_eq!(recv_ty("getName"), Some("PackageInterface"));
}

#[test]
fn php_test_files_and_broken_code() {
    assert!(crate::model::is_test_path(
        "tests/Composer/Test/InstallerTest.php"
    ));
    assert!(crate::model::is_test_path(
        "src/Illuminate/Foundation/FooTest.php"
    ));
    assert!(!crate::model::is_test_path("src/Composer/Installer.php"));
    let src = "<?php\nnamespace A;\nclass B {\n  public function f() { g( }\n  public function h() { return 1; }\n}\n";
    let f = parse_file("src/A/B.php", Lang::Php, src.as_bytes());
    assert!(!f.diagnostics.is_empty());
    assert!(
        f.definitions.iter().any(|d| d.qualified_name == "B::h"),
        "{:#?}",
        outline(&f)
    );
}

#[test]
fn a_call_on_what_a_call_returns_is_the_chain_the_linker_follows() {
    let src = "<?php\nclass Test {\n    public function run(App $app) {\n        $app->get('/', 'h')->setName('home');\n        $route = $app->map(['GET'], '/x', 'h');\n        $route->add('m');\n        $this->make()->finish();\n    }\n}\n";
    let f = parse_file("tests/AppTest.php", Lang::Php, src.as_bytes());
    let chains: Vec<(&str, Option<&str>)> = f
        .references
        .iter()
        .filter(|r| matches!(r.name, "setName" | "add" | "finish"))
        .map(|r| (r.name, r.receiver_type.or(r.receiver)))
        .collect();
    // The chain is the receiver written out (or, through a variable, its type).
    assert_eq!(
        chains,
        [
            ("setName", Some("<App>.get()")),
            ("add", Some("<App>.map()")),
            ("finish", Some("self.make()")),
        ]
    );
}
