//! Cross-file resolution tests for Scala, PHP, Swift and Ruby, one small repository each.

use super::EdgeKind;
use super::tests::has;
use crate::testing::graph_of as graph;

#[test]
fn scala_resolves_through_packages_companions_and_java() {
    let g = graph(&[
        (
            "core/src/main/scala/kafka/server/ReplicaManager.scala",
            "package kafka\npackage server\n\nimport kafka.log.{UnifiedLog => UL}\nimport org.apache.kafka.common.Records\n\nclass ReplicaManager(config: KafkaConfig) extends Logging {\n  def append(log: UL): Unit = {\n    log.appendAsLeader(Records.empty())\n    val cleaner = new Cleaner(config)\n    cleaner.clean()\n    ReplicaManager.create()\n    purge()\n  }\n  private def purge(): Unit = {}\n}\n\nobject ReplicaManager {\n  def create(): ReplicaManager = new ReplicaManager(null)\n}\n",
        ),
        (
            "core/src/main/scala/kafka/server/Cleaner.scala",
            "package kafka.server\n\nclass Cleaner(config: KafkaConfig) {\n  def clean(): Unit = {}\n}\n",
        ),
        (
            "core/src/main/scala/kafka/server/KafkaConfig.scala",
            "package kafka.server\n\nclass KafkaConfig\n",
        ),
        (
            "core/src/main/scala/kafka/utils/Logging.scala",
            "package kafka.server\n\ntrait Logging {\n  def info(msg: String): Unit = {}\n}\n",
        ),
        (
            "core/src/main/scala/kafka/log/UnifiedLog.scala",
            "package kafka.log\n\nclass UnifiedLog {\n  def appendAsLeader(r: Any): Unit = {}\n}\n",
        ),
        (
            "clients/src/main/java/org/apache/kafka/common/Records.java",
            "package org.apache.kafka.common;\npublic class Records { public static Records empty() { return null; } }\n",
        ),
    ]);
    let append = "core/src/main/scala/kafka/server/ReplicaManager.scala#ReplicaManager.append";
    for (to, why) in [
        (
            "core/src/main/scala/kafka/log/UnifiedLog.scala#UnifiedLog.appendAsLeader",
            "a parameter typed by a renamed import",
        ),
        (
            "clients/src/main/java/org/apache/kafka/common/Records.java#Records.empty",
            "a Java class imported into Scala",
        ),
        (
            "core/src/main/scala/kafka/server/Cleaner.scala#Cleaner.clean",
            "a local val constructed with new, same package",
        ),
        (
            "core/src/main/scala/kafka/server/Cleaner.scala#Cleaner",
            "new constructs the class",
        ),
        (
            "core/src/main/scala/kafka/server/ReplicaManager.scala#ReplicaManager.create",
            "the companion object's member",
        ),
        (
            "core/src/main/scala/kafka/server/ReplicaManager.scala#ReplicaManager.purge",
            "implicit this",
        ),
    ] {
        assert!(has(&g, EdgeKind::Calls, append, to), "{why}: {to}");
    }
    assert!(has(
        &g,
        EdgeKind::Inherits,
        "core/src/main/scala/kafka/server/ReplicaManager.scala#ReplicaManager",
        "core/src/main/scala/kafka/utils/Logging.scala#Logging"
    ));
}

#[test]
fn php_resolves_through_namespaces_use_traits_and_parents() {
    let g = graph(&[
        (
            "src/Installer/LibraryInstaller.php",
            "<?php\nnamespace App\\Installer;\n\nuse App\\IO\\ConsoleIO as IO;\nuse App\\Util\\Filesystem;\nuse function App\\Util\\normalize;\n\nclass LibraryInstaller extends BaseInstaller\n{\n    use LoggerTrait;\n\n    public function __construct(private IO $io) {}\n\n    public function install(Filesystem $fs): void\n    {\n        $this->io->write('x');\n        $fs->remove('dir');\n        $this->log('done');\n        parent::prepare();\n        Filesystem::isAbsolute('x');\n        normalize('p');\n        $this->finish();\n    }\n\n    private function finish(): void {}\n}\n",
        ),
        (
            "src/Installer/BaseInstaller.php",
            "<?php\nnamespace App\\Installer;\n\nabstract class BaseInstaller\n{\n    protected function prepare(): void {}\n}\n",
        ),
        (
            "src/Installer/LoggerTrait.php",
            "<?php\nnamespace App\\Installer;\n\ntrait LoggerTrait\n{\n    public function log(string $m): void {}\n}\n",
        ),
        (
            "src/IO/ConsoleIO.php",
            "<?php\nnamespace App\\IO;\n\nclass ConsoleIO\n{\n    public function write(string $m): void {}\n}\n",
        ),
        (
            "src/Util/Filesystem.php",
            "<?php\nnamespace App\\Util;\n\nclass Filesystem\n{\n    public function remove(string $p): void {}\n    public static function isAbsolute(string $p): bool { return true; }\n}\n",
        ),
        (
            "src/Util/functions.php",
            "<?php\nnamespace App\\Util;\n\nfunction normalize(string $p): string { return $p; }\n",
        ),
    ]);
    let install = "src/Installer/LibraryInstaller.php#LibraryInstaller::install";
    for (to, why) in [
        (
            "src/IO/ConsoleIO.php#ConsoleIO::write",
            "a promoted property typed by an aliased use",
        ),
        (
            "src/Util/Filesystem.php#Filesystem::remove",
            "a typed parameter",
        ),
        (
            "src/Installer/LoggerTrait.php#LoggerTrait::log",
            "a used trait",
        ),
        (
            "src/Installer/BaseInstaller.php#BaseInstaller::prepare",
            "parent::",
        ),
        (
            "src/Util/Filesystem.php#Filesystem::isAbsolute",
            "a static call",
        ),
        ("src/Util/functions.php#normalize", "use function"),
        (
            "src/Installer/LibraryInstaller.php#LibraryInstaller::finish",
            "$this->",
        ),
    ] {
        assert!(has(&g, EdgeKind::Calls, install, to), "{why}: {to}");
    }
    assert!(has(
        &g,
        EdgeKind::Inherits,
        "src/Installer/LibraryInstaller.php#LibraryInstaller",
        "src/Installer/BaseInstaller.php#BaseInstaller"
    ));
}

#[test]
fn swift_resolves_within_a_module_across_imports_and_extensions() {
    let g = graph(&[
        (
            "Sources/Networking/Session.swift",
            "import Foundation\n\nopen class Session {\n    let adapter: RequestAdapter\n\n    init(adapter: RequestAdapter) {\n        self.adapter = adapter\n    }\n\n    func request(_ url: String) -> DataRequest {\n        let request = DataRequest(url: url)\n        adapter.adapt(request)\n        validate(request)\n        self.trace()\n        return request\n    }\n}\n",
        ),
        (
            "Sources/Networking/Session+Tracing.swift",
            "extension Session: Loggable {\n    func trace() {}\n}\n",
        ),
        (
            "Sources/Networking/Request.swift",
            "public protocol RequestAdapter {\n    func adapt(_ request: DataRequest)\n}\n\npublic final class DataRequest {\n    init(url: String) {}\n}\n\nfunc validate(_ request: DataRequest) {}\n",
        ),
        (
            "Sources/Networking/Loggable.swift",
            "public protocol Loggable {}\n",
        ),
        (
            "Sources/App/main.swift",
            "import Networking\n\nfunc run() {\n    let session = Session(adapter: Default())\n    session.request(\"x\")\n    validate(DataRequest(url: \"y\"))\n}\n",
        ),
    ]);
    let request = "Sources/Networking/Session.swift#Session.request";
    for (to, why) in [
        (
            "Sources/Networking/Request.swift#RequestAdapter.adapt",
            "a property typed by a protocol, implicit self",
        ),
        (
            "Sources/Networking/Request.swift#validate",
            "same module, no import",
        ),
        (
            "Sources/Networking/Request.swift#DataRequest",
            "construction",
        ),
        (
            "Sources/Networking/Session+Tracing.swift#Session.trace",
            "a method from an extension in another file",
        ),
    ] {
        assert!(has(&g, EdgeKind::Calls, request, to), "{why}: {to}");
    }
    let run = "Sources/App/main.swift#run";
    for (to, why) in [
        (
            "Sources/Networking/Session.swift#Session.request",
            "a local's type, imported module",
        ),
        (
            "Sources/Networking/Request.swift#validate",
            "an imported module's function",
        ),
    ] {
        assert!(has(&g, EdgeKind::Calls, run, to), "{why}: {to}");
    }
}

#[test]
fn swift_modules_follow_the_package_manifest() {
    let g = graph(&[
        (
            "Package.swift",
            "import PackageDescription\nlet package = Package(name: \"Net\", targets: [.target(name: \"Net\", path: \"Source\"), .testTarget(name: \"NetTests\", path: \"Tests\")])\n",
        ),
        (
            "Source/Core/Session.swift",
            "open class Session {\n    func request() { validate() }\n}\n",
        ),
        ("Source/Features/Validation.swift", "func validate() {}\n"),
        (
            "Tests/SessionTests.swift",
            "@testable import Net\n\nfinal class SessionTests {\n    func testRequest() { Session().request(); validate() }\n}\n",
        ),
    ]);
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "Source/Core/Session.swift#Session.request",
            "Source/Features/Validation.swift#validate"
        ),
        "one module across the target's subdirectories"
    );
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "Tests/SessionTests.swift#SessionTests.testRequest",
            "Source/Features/Validation.swift#validate"
        ),
        "`import Net` names the target the manifest declares"
    );
    let file = |p: &str| g.files.iter().position(|f| f.path == p).unwrap() as u32;
    assert!(
        g.imports.contains(&(
            file("Tests/SessionTests.swift"),
            file("Source/Features/Validation.swift")
        )),
        "the import reaches every file of the target: {:?}",
        g.imports
    );
}

#[test]
fn ruby_modules_are_constants_and_a_top_level_include_reaches_every_file() {
    let g = graph(&[
        (
            "lib/shop.rb",
            "module Shop\n  def self.logger; end\n  module Env\n    API_FORMAT = 'api.format'\n  end\nend\n",
        ),
        (
            "lib/shop/utils.rb",
            "module Shop\n  module Utils\n    def self.slug(s); s; end\n  end\nend\n",
        ),
        (
            "lib/shop/page.rb",
            "module Shop\n  class Page\n    def title\n      Utils.slug(\"x\")\n      Shop.logger\n      env[Shop::Env::API_FORMAT]\n    end\n  end\nend\n",
        ),
        // Another `Utils`: the name alone decides nothing.
        (
            "lib/admin/utils.rb",
            "module Admin\n  module Utils\n  end\nend\n",
        ),
        ("test/helper.rb", "require \"shop\"\ninclude Shop\n"),
        (
            "test/test_utils.rb",
            "require \"helper\"\n\nclass TestUtils\n  def test_slug\n    Utils.slug(\"a\")\n  end\nend\n",
        ),
    ]);
    let refs = super::tests::edges(&g, EdgeKind::References);
    for (from, to, why) in [
        (
            "lib/shop/page.rb#Shop::Page#title",
            "lib/shop/utils.rb#Shop::Utils",
            "a module named from inside its namespace",
        ),
        (
            "test/test_utils.rb#TestUtils#test_slug",
            "lib/shop/utils.rb#Shop::Utils",
            "through `include Shop` at a helper's top level",
        ),
        (
            "lib/shop/page.rb#Shop::Page#title",
            "lib/shop.rb#Shop::Env::API_FORMAT",
            "a value constant named as a class is",
        ),
    ] {
        assert!(has(&g, EdgeKind::References, from, to), "{why}: {refs:?}");
        assert!(!has(
            &g,
            EdgeKind::References,
            from,
            "lib/admin/utils.rb#Admin::Utils"
        ));
    }
}

#[test]
fn a_method_called_on_a_new_instance_is_its_class_method() {
    // Two classes with a `get`: the name alone decides nothing, the constructed class does.
    let g = graph(&[
        (
            "lib/rack/mock_request.rb",
            "module Rack\n  class MockRequest\n    def get(uri); end\n  end\nend\n",
        ),
        (
            "lib/rack/client.rb",
            "module Rack\n  class Client\n    def get(uri); end\n  end\nend\n",
        ),
        (
            "test/spec_app.rb",
            "class SpecApp\n  def test_root\n    Rack::MockRequest.new(app).get(\"/\")\n  end\nend\n",
        ),
        (
            "shop/models.py",
            "class Cart:\n    def total(self):\n        return 1\n\n\nclass Order:\n    def total(self):\n        return 2\n",
        ),
        (
            "shop/views.py",
            "from shop import models\n\n\ndef checkout():\n    return models.Cart([]).total()\n",
        ),
        (
            "src/main/kotlin/shop/Moshi.kt",
            "package shop\n\nclass Moshi {\n    class Builder {\n        fun add(x: Int): Builder = this\n    }\n}\n\nclass Gson {\n    fun add(x: Int) {}\n}\n",
        ),
        (
            "src/main/kotlin/shop/Main.kt",
            "package shop\n\nfun main() {\n    Moshi.Builder().add(1)\n}\n",
        ),
        (
            "src/main/java/shop/Cart.java",
            "package shop;\n\nclass Cart {\n    int total() { return 1; }\n}\n\nclass Order {\n    int total() { return 2; }\n}\n",
        ),
        (
            "src/main/java/shop/Till.java",
            "package shop;\n\nclass Till {\n    int ring() { return new Cart().total(); }\n}\n",
        ),
        (
            "web/cart.js",
            "class Cart { total() { return 1; } }\nclass Order { total() { return 2; } }\nfunction ring() { return new Cart().total(); }\n",
        ),
        (
            "src/Shop/Cart.php",
            "<?php\nnamespace Shop;\n\nclass Cart { public function total() { return 1; } }\nclass Order { public function total() { return 2; } }\nfunction ring() { return (new Cart())->total(); }\n",
        ),
        // A method the constructed type does not have (an extension, a base elsewhere) is
        // found as on any other expression.
        (
            "Tests/Should.cs",
            "static class Should {\n    public static void ShouldThrow(this System.Action a) { }\n}\nclass T {\n    void M() { new System.Action(() => {}).ShouldThrow(); }\n}\n",
        ),
    ]);
    for (from, to, not) in [
        (
            "test/spec_app.rb#SpecApp#test_root",
            "lib/rack/mock_request.rb#Rack::MockRequest#get",
            "lib/rack/client.rb#Rack::Client#get",
        ),
        (
            "shop/views.py#checkout",
            "shop/models.py#Cart.total",
            "shop/models.py#Order.total",
        ),
        (
            "src/main/kotlin/shop/Main.kt#main",
            "src/main/kotlin/shop/Moshi.kt#Moshi.Builder.add",
            "src/main/kotlin/shop/Moshi.kt#Gson.add",
        ),
        (
            "src/main/java/shop/Till.java#Till.ring",
            "src/main/java/shop/Cart.java#Cart.total",
            "src/main/java/shop/Cart.java#Order.total",
        ),
        (
            "web/cart.js#ring",
            "web/cart.js#Cart.total",
            "web/cart.js#Order.total",
        ),
        (
            "src/Shop/Cart.php#ring",
            "src/Shop/Cart.php#Cart::total",
            "src/Shop/Cart.php#Order::total",
        ),
    ] {
        assert_calls(&g, from, to, not);
    }
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "Tests/Should.cs#T.M",
            "Tests/Should.cs#Should.ShouldThrow"
        ),
        "{:?}",
        super::tests::edges(&g, EdgeKind::Calls)
    );
}

#[test]
fn chains_of_calls_resolve_through_declared_return_types() {
    // Two of every name: only the declared return types tell which one each link calls.
    let g = graph(&[
        (
            "src/main/java/g/GsonBuilder.java",
            "package g;\n\npublic final class GsonBuilder {\n    public GsonBuilder setPretty() { return this; }\n    public Gson create() { return new Gson(); }\n}\n",
        ),
        (
            "src/main/java/g/Gson.java",
            "package g;\n\npublic final class Gson {\n    public String toJson(Object o) { return \"\"; }\n    public static TypeToken token() { return null; }\n}\n",
        ),
        (
            "src/main/java/g/Other.java",
            "package g;\n\nclass Other {\n    Other setPretty() { return this; }\n    Other create() { return this; }\n    String toJson(Object o) { return \"\"; }\n}\n",
        ),
        (
            "src/main/java/g/TypeToken.java",
            "package g;\n\nclass TypeToken {\n    boolean isRaw() { return true; }\n}\nclass Raw {\n    boolean isRaw() { return false; }\n}\n",
        ),
        (
            "src/main/java/g/Use.java",
            "package g;\n\nclass Use {\n    String run(Object o) {\n        Gson.token().isRaw();\n        return new GsonBuilder().setPretty().create().toJson(o);\n    }\n}\n",
        ),
        (
            "src/main/kotlin/m/Moshi.kt",
            "package m\n\nclass Moshi {\n    fun adapter(): Adapter = Adapter()\n    fun adapter(\n        a: Int,\n        b: Int,\n        c: Int,\n        d: Int,\n    ): Adapter = Adapter()\n    class Builder {\n        fun add(x: Int): Builder = this\n        fun build(): Moshi = Moshi()\n    }\n}\n\nclass Adapter {\n    fun toJson(): String = \"\"\n}\n\nclass Retrofit {\n    fun build(): Retrofit = this\n    fun adapter(): Retrofit = this\n    fun toJson(): String = \"\"\n}\n",
        ),
        (
            "src/main/kotlin/m/Main.kt",
            "package m\n\nfun main() {\n    Moshi.Builder().add(1).build().adapter().toJson()\n}\n\nfun later() {\n    val moshi = Moshi.Builder().add(2).build()\n    moshi.adapter()\n    val adapter = moshi.adapter()\n    adapter.toJson()\n}\n\nclass Gen {\n    fun run() {\n        val spec = Poet.classBuilder().build()\n        spec.onlyHere()\n    }\n\n    private fun Poet.onlyHere() {}\n}\n",
        ),
        (
            "web/schema.ts",
            "export class ZodString {\n  min(n: number): this { return this; }\n  parse(x: unknown): Parsed { return new Parsed(); }\n}\nexport class Parsed {\n  value(): number { return 1; }\n}\nexport class Other {\n  min(n: number): Other { return this; }\n  value(): number { return 2; }\n}\nexport function check(s: ZodString) {\n  return s.min(1).parse(2).value();\n}\n",
        ),
        (
            "src/Mapper.cs",
            "namespace M {\n    public class Config {\n        public Config Add(int x) { return this; }\n        public IMapper CreateMapper() { return null; }\n        public Type Kind() { return null; }\n    }\n    public interface IMapper {\n        object Map(object o);\n    }\n    public class Other {\n        public Other Add(int x) { return this; }\n        public object Map(object o) { return o; }\n    }\n    public class Use {\n        public object Run(object o) { return new Config().Add(1).CreateMapper().Map(o); }\n        public object Later(object o) { var m = new Config().CreateMapper(); return m.Map(o); }\n        public int OfType() { var t = new Config().Kind(); return t.InheritedCount(); }\n    }\n    public static class TypeExtensions {\n        public static int InheritedCount(this System.Type type) { return 0; }\n    }\n}\n",
        ),
    ]);
    for (from, to, not) in [
        (
            "src/main/java/g/Use.java#Use.run",
            "src/main/java/g/Gson.java#Gson.toJson",
            "src/main/java/g/Other.java#Other.toJson",
        ),
        (
            "src/main/java/g/Use.java#Use.run",
            "src/main/java/g/GsonBuilder.java#GsonBuilder.create",
            "src/main/java/g/Other.java#Other.create",
        ),
        (
            "src/main/java/g/Use.java#Use.run",
            "src/main/java/g/TypeToken.java#TypeToken.isRaw",
            "src/main/java/g/TypeToken.java#Raw.isRaw",
        ),
        (
            "src/main/kotlin/m/Main.kt#main",
            "src/main/kotlin/m/Moshi.kt#Moshi.Builder.build",
            "src/main/kotlin/m/Moshi.kt#Retrofit.build",
        ),
        (
            "src/main/kotlin/m/Main.kt#main",
            "src/main/kotlin/m/Moshi.kt#Moshi.adapter",
            "src/main/kotlin/m/Moshi.kt#Retrofit.adapter",
        ),
        (
            "src/main/kotlin/m/Main.kt#main",
            "src/main/kotlin/m/Moshi.kt#Adapter.toJson",
            "src/main/kotlin/m/Moshi.kt#Retrofit.toJson",
        ),
        (
            "src/main/kotlin/m/Main.kt#later",
            "src/main/kotlin/m/Moshi.kt#Moshi.adapter",
            "src/main/kotlin/m/Moshi.kt#Retrofit.adapter",
        ),
        // An overload whose signature was cut before its return type (a long parameter
        // list) does not end the chain.
        (
            "src/main/kotlin/m/Main.kt#later",
            "src/main/kotlin/m/Moshi.kt#Adapter.toJson",
            "src/main/kotlin/m/Moshi.kt#Retrofit.toJson",
        ),
        (
            "src/Mapper.cs#Use.Run",
            "src/Mapper.cs#IMapper.Map",
            "src/Mapper.cs#Other.Map",
        ),
        (
            "web/schema.ts#check",
            "web/schema.ts#Parsed.value",
            "web/schema.ts#Other.value",
        ),
        (
            "src/Mapper.cs#Use.Later",
            "src/Mapper.cs#IMapper.Map",
            "src/Mapper.cs#Other.Map",
        ),
    ] {
        assert_calls(&g, from, to, not);
    }
    // A chain that returns a library's type leaves the call to its name: here an extension
    // method of the repository's own.
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "src/Mapper.cs#Use.OfType",
            "src/Mapper.cs#TypeExtensions.InheritedCount"
        ),
        "{:?}",
        super::tests::edges(&g, EdgeKind::Calls)
    );
    // A chain that cannot be followed (a library's builder) leaves the call to its name.
    assert!(
        has(
            &g,
            EdgeKind::Calls,
            "src/main/kotlin/m/Main.kt#Gen.run",
            "src/main/kotlin/m/Main.kt#Gen.onlyHere"
        ),
        "{:?}",
        super::tests::edges(&g, EdgeKind::Calls)
    );
}

#[test]
fn a_kotlin_extension_function_is_a_member_of_the_type_it_extends() {
    let g = graph(&[
        (
            "src/main/kotlin/k/Koin.kt",
            "package k\n\nclass Koin {\n    fun close() {}\n}\n\nclass Scope {\n    fun close() {}\n}\n",
        ),
        (
            "src/main/kotlin/k/KoinExt.kt",
            "package k\n\nfun Koin.isReady(): Boolean = true\n\nfun Koin.stop() {\n    close()\n}\n",
        ),
        (
            "src/main/kotlin/k/ScopeExt.kt",
            "package k\n\nfun Scope.isReady(): Boolean = false\n",
        ),
        (
            "src/main/kotlin/k/Main.kt",
            "package k\n\nfun main(koin: Koin) {\n    koin.isReady()\n}\n",
        ),
    ]);
    let calls = super::tests::edges(&g, EdgeKind::Calls);
    for (from, to, not, why) in [
        (
            "src/main/kotlin/k/Main.kt#main",
            "src/main/kotlin/k/KoinExt.kt#isReady",
            "src/main/kotlin/k/ScopeExt.kt#isReady",
            "called on its receiver's type",
        ),
        (
            "src/main/kotlin/k/KoinExt.kt#stop",
            "src/main/kotlin/k/Koin.kt#Koin.close",
            "src/main/kotlin/k/Koin.kt#Scope.close",
            "`this` inside it is the type it extends",
        ),
    ] {
        assert!(has(&g, EdgeKind::Calls, from, to), "{why}: {calls:?}");
        assert!(!has(&g, EdgeKind::Calls, from, not), "{why}: {calls:?}");
    }
}

/// `from` calls `to` and not `not` (a definition of the same name elsewhere).
fn assert_calls(g: &crate::link::Graph, from: &str, to: &str, not: &str) {
    let calls = super::tests::edges(g, EdgeKind::Calls);
    assert!(
        has(g, EdgeKind::Calls, from, to),
        "{from} → {to}: {calls:?}"
    );
    assert!(
        !has(g, EdgeKind::Calls, from, not),
        "{from} ↛ {not}: {calls:?}"
    );
}

#[test]
fn a_csharp_extension_method_of_a_repository_type_is_a_member_of_it() {
    let g = graph(&[
        (
            "src/Policy.cs",
            "namespace P {\n    public class Policy { public void Execute() {} }\n    public class CircuitBreakerPolicy : Policy { }\n    public class Other { }\n}\n",
        ),
        (
            "test/Helpers.cs",
            "namespace P.Tests {\n    public static class PolicyExtensions {\n        public static void Raise(this Policy policy, int times) { }\n        public static int Count(this System.Collections.Generic.IList<int> list) { return 0; }\n    }\n    public static class OtherExtensions {\n        public static void Raise(this Other other) { }\n    }\n}\n",
        ),
        (
            "test/BreakerSpecs.cs",
            "using P;\nusing P.Tests;\nnamespace P.Specs {\n    public class BreakerSpecs {\n        public void Breaks(System.Collections.Generic.List<int> list) {\n            CircuitBreakerPolicy breaker = new CircuitBreakerPolicy();\n            breaker.Raise(2);\n            breaker.Execute();\n            list.Count();\n        }\n    }\n}\n",
        ),
    ]);
    // Through the receiver's base type, not the same-named extension of another type.
    assert_calls(
        &g,
        "test/BreakerSpecs.cs#BreakerSpecs.Breaks",
        "test/Helpers.cs#PolicyExtensions.Raise",
        "test/Helpers.cs#OtherExtensions.Raise",
    );
    // The type's own members first.
    assert!(has(
        &g,
        EdgeKind::Calls,
        "test/BreakerSpecs.cs#BreakerSpecs.Breaks",
        "src/Policy.cs#Policy.Execute"
    ));
    // An extension of a library's type is no member of anything the repository defines.
    let g2 = graph(&[(
        "src/Ext.cs",
        "namespace P { public static class E { public static int Count(this System.Collections.Generic.IList<int> l) { return 0; } } }\n",
    )]);
    assert!(super::resolve::csharp_extensions(&g2).is_empty());
}

#[test]
fn a_cpp_fixture_tests_calls_are_its_fixtures_and_the_test_is_called_by_none() {
    let g = graph(&[
        (
            "db/db_test.cc",
            "namespace leveldb {\nclass DBTest {\n public:\n  int Get(int k) { return k; }\n};\nTEST_F(DBTest, Get) {\n  Get(1);\n}\n}\n",
        ),
        (
            "tests/app_test.cpp",
            "struct TApp {\n  void run() {}\n};\n\nTEST_CASE_METHOD(TApp, \"run\", \"[app]\") {\n    run();\n}\n",
        ),
    ]);
    // The test bodies' calls, by the lines of what they reach: the fixture's member, not the
    // test itself, though it bears the member's name.
    let calls: Vec<(u32, u32)> = g
        .edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Calls)
        .map(|e| (g.def(e.from).start_line, g.def(e.to).start_line))
        .collect();
    assert!(calls.contains(&(6, 4)), "{calls:?}");
    assert!(calls.contains(&(5, 2)), "{calls:?}");
    assert_eq!(calls.len(), 2, "{calls:?}");
}
