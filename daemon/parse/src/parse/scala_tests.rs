//! Scala parsing: definitions, qualified names, packages, imports, references, receivers.

use super::parse_file;
use super::tests::{find, has_ref, outline};
use crate::model::{DefKind, Lang, RefKind};

const KAFKA_APIS: &str = r#"package kafka
package server

import kafka.log.{LogManager, UnifiedLog => UL}
import org.apache.kafka.common._
import kafka.utils.Logging
import scala.jdk.CollectionConverters.*

/** Handles every request a broker receives.
  * @param requestChannel where responses go
  */
class KafkaApis(val requestChannel: RequestChannel, config: KafkaConfig)
    extends ApiRequestHandler with Logging {
  private val metrics = new Metrics()

  def this() = this(null, null)

  def handle(request: RequestChannel.Request): Unit = {
    requestChannel.sendResponse(request)
    helper(1)
    metrics.record()
    val log = new UL(config)
    log.append(records)
    KafkaApis.create[Int]()
    val r = new Runnable { def run(): Unit = close() }
    KafkaApis.Version
  }

  private def helper(n: Int): Int = n + 1
  def close(): Unit
}

object KafkaApis {
  final val MaxSize = 10
  def create[T](): KafkaApis = new KafkaApis(null, null)
}

trait Handler[+T <: Request, -U] {
  def handle(u: U): T
  def info(msg: => String): Unit
}

case class Record(key: String, value: Array[Byte]) extends Serializable

enum Color { case Red, Green }

type BrokerId = Int

def topLevel(x: Int) = x * 2
"#;

#[test]
fn scala_definitions_and_qualified_names() {
    let f = parse_file(
        "core/src/main/scala/kafka/server/KafkaApis.scala",
        Lang::Scala,
        KAFKA_APIS.as_bytes(),
    );
    assert_eq!(f.package.as_deref(), Some("kafka.server"));
    let names: Vec<(DefKind, String)> = outline(&f).into_iter().map(|o| (o.0, o.1)).collect();
    for expected in [
        (DefKind::Class, "KafkaApis"),
        (DefKind::Constructor, "KafkaApis.KafkaApis"),
        (DefKind::Method, "KafkaApis.handle"),
        (DefKind::Method, "KafkaApis.helper"),
        (DefKind::Method, "KafkaApis.close"),
        (DefKind::Constant, "KafkaApis.MaxSize"),
        (DefKind::Method, "KafkaApis.create"),
        (DefKind::Trait, "Handler"),
        (DefKind::Method, "Handler.info"),
        (DefKind::Class, "Record"),
        (DefKind::Enum, "Color"),
        (DefKind::TypeAlias, "BrokerId"),
        (DefKind::Function, "topLevel"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    // Class and companion object are two definitions with one name.
    assert_eq!(names.iter().filter(|n| n.1 == "KafkaApis").count(), 2);
    // A member's lower-case `val` is not a constant.
    assert!(
        !names.iter().any(|n| n.1 == "KafkaApis.metrics"),
        "{names:?}"
    );
    let class = f
        .definitions
        .iter()
        .find(|d| d.qualified_name == "KafkaApis")
        .expect("the class");
    assert_eq!(
        class.doc.as_deref().map(|d| d.lines().next().unwrap_or("")),
        Some("Handles every request a broker receives.")
    );
    assert!(
        find(&f, "KafkaApis.handle")
            .signature
            .starts_with("def handle(request: RequestChannel.Request): Unit")
    );
}

#[test]
fn scala_imports_supertypes_and_calls_with_receivers() {
    let f = parse_file(
        "core/src/main/scala/kafka/server/KafkaApis.scala",
        Lang::Scala,
        KAFKA_APIS.as_bytes(),
    );
    let imported = &f.imports;
    let named = |m: &str, n: &str, a: &str| {
        imported
            .iter()
            .any(|i| i.module == m && i.names.contains(&(n.to_string(), a.to_string())))
    };
    assert!(
        named("kafka.log.LogManager", "LogManager", "LogManager"),
        "{imported:?}"
    );
    assert!(
        named("kafka.log.UnifiedLog", "UnifiedLog", "UL"),
        "{imported:?}"
    );
    assert!(
        named("kafka.utils.Logging", "Logging", "Logging"),
        "{imported:?}"
    );
    assert!(
        imported
            .iter()
            .any(|i| i.module == "org.apache.kafka.common" && i.wildcard),
        "{imported:?}"
    );
    assert!(
        imported
            .iter()
            .any(|i| i.module == "scala.jdk.CollectionConverters" && i.wildcard),
        "{imported:?}"
    );
    // Nothing imports `common` or `CollectionConverters` as a name.
    assert!(
        !imported
            .iter()
            .any(|i| i.module.ends_with(".common") && !i.wildcard)
    );

    assert!(has_ref(&f, RefKind::Inherits, None, "ApiRequestHandler"));
    assert!(has_ref(&f, RefKind::Implements, None, "Logging"));
    assert!(has_ref(&f, RefKind::Inherits, None, "Serializable"));
    assert!(has_ref(
        &f,
        RefKind::Type,
        Some("RequestChannel"),
        "Request"
    ));
    assert!(has_ref(&f, RefKind::Type, None, "Request"), "a type bound");
    assert!(has_ref(
        &f,
        RefKind::Call,
        Some("requestChannel"),
        "sendResponse"
    ));
    assert!(has_ref(&f, RefKind::Call, None, "helper"));
    assert!(has_ref(&f, RefKind::Call, None, "Metrics"), "new Metrics()");
    assert!(
        has_ref(&f, RefKind::Call, None, "UL"),
        "new through an alias"
    );
    assert!(
        has_ref(&f, RefKind::Call, Some("KafkaApis"), "create"),
        "f[T]()"
    );
    assert!(
        has_ref(&f, RefKind::Call, Some("KafkaApis"), "Version"),
        "no parentheses"
    );
    assert!(
        has_ref(&f, RefKind::Inherits, None, "Runnable"),
        "anonymous class"
    );
    // The type parameter `T` is not a reference.
    assert!(!has_ref(&f, RefKind::Type, None, "T"));
    assert!(
        !has_ref(&f, RefKind::Type, None, "U"),
        "a contravariant one neither"
    );
    // Receiver types: a class parameter, a member `val`, a local `val`.
    let recv_ty = |name: &str| {
        f.references
            .iter()
            .find(|r| r.name == name && r.kind == RefKind::Call)
            .and_then(|r| r.receiver_type)
    };
    assert_eq!(recv_ty("sendResponse"), Some("RequestChannel"));
    assert_eq!(recv_ty("record"), Some("Metrics"));
    assert_eq!(recv_ty("append"), Some("UL"));
}

#[test]
fn scala_test_files_and_broken_code() {
    assert!(crate::model::is_test_path(
        "core/src/test/scala/unit/kafka/LogTest.scala"
    ));
    assert!(crate::model::is_test_path("modules/core/LogSpec.scala"));
    assert!(crate::model::is_test_path("modules/core/LogSuite.scala"));
    assert!(!crate::model::is_test_path(
        "core/src/main/scala/kafka/Log.scala"
    ));
    let src = "package a\nclass B {\n  def f(): Unit = { g( }\n  def h(): Int = 1\n}\nobject C { def k() = B.h() }\n";
    let f = parse_file("src/main/scala/a/B.scala", Lang::Scala, src.as_bytes());
    assert!(!f.diagnostics.is_empty());
    assert!(
        f.definitions.iter().any(|d| d.qualified_name == "C.k"),
        "{:#?}",
        outline(&f)
    );
}
