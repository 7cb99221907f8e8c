//! Receivers that are chains of calls (`Builder::new().wide().only(true)`): the type of each
//! link follows from the return type its callee declares, so the call at the end resolves
//! through the type the chain yields, as `x.f()` does through `x`'s declared type.
//!
//! The parser writes such a receiver with its arguments left out (`Builder::new().wide()`);
//! the chain starts at a type's associated function (`Type::f()`, `Self::f()`), a function in
//! scope (`f()`), `self`, or a value whose type the parser knew (`<Builder>`). A link whose
//! callee is not found, is ambiguous, or declares no return type a member lookup can use
//! (`Result<…>`, a trait object) ends the chain unknown, and the call is resolved as on any
//! receiver of unknown type.

use super::resolve::FileScope;
use crate::model::{Definition, Lang, RefKind};

/// The name of the type a definition's signature says it returns: `-> &mut Builder` gives
/// `Builder`, `-> Self` gives `Self`, `-> io::Result<()>` gives `Result`. `None` when the
/// signature declares none (or the language's signatures are not read here).
pub fn return_type(lang: Lang, signature: &str) -> Option<&str> {
    match lang {
        Lang::Rust => rust_return_type(signature),
        Lang::Kotlin => after_parameters(&signature[signature.find("fun ")?..]),
        // `min(n: number): ZodString`, `set(v: T): this` (the method's own class).
        Lang::TypeScript | Lang::Tsx => match after_parameters(signature) {
            Some("this") => Some("Self"),
            other => other,
        },
        Lang::Java | Lang::CSharp => java_return_type(signature),
        Lang::Php => php_return_type(signature),
        _ => None,
    }
}

/// PHP: the declared return type after the parameter list, `function get(…): RouteInterface`
/// (`?Foo` nullable, `\A\B\Foo` qualified) gives `RouteInterface`; `: static` and `: self`
/// give `Self`; a union (`A|B`) or none gives `None`.
fn php_return_type(signature: &str) -> Option<&str> {
    let ty = declared_after_parameters(&signature[signature.find("function")?..])?
        .trim_start_matches('?')
        .split(|c: char| c.is_whitespace() || c == '{')
        .next()?;
    if ty.contains(['|', '&']) {
        return None;
    }
    match ty {
        "static" | "self" => Some("Self"),
        _ => type_name(ty.rsplit('\\').next()?),
    }
}

/// A type as a member lookup reads it: `a.b.Builder<T>?` gives `Builder`; `None` unless it
/// starts in upper case, as class names do (`int`, `void`, a type parameter `t` do not).
fn type_name(ty: &str) -> Option<&str> {
    let ty = ty.trim();
    let end = ty
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(ty.len());
    let name = ty[..end].rsplit('.').next().unwrap_or("");
    name.starts_with(char::is_uppercase).then_some(name)
}

/// Where the parameter list opening at `open` (a `(`) closes.
fn matching_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The type declared after a parameter list, `name(…): Type` (Kotlin's `fun add(x: Any):
/// Builder`, `fun <T> adapter(t: Type): JsonAdapter<T>?`; TypeScript's `min(n: number):
/// ZodString`); `None` without one (`fun build() = Moshi(this)`). `this` is returned as is.
fn after_parameters(signature: &str) -> Option<&str> {
    let rest = declared_after_parameters(signature)?;
    if rest.starts_with("this") && !rest[4..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    {
        return Some("this");
    }
    type_name(rest)
}

/// What a signature declares after its parameter list and a `:` (`fun f(…): T`, `f(…): T`,
/// `function f(…): T`), as written; `None` when it declares nothing there.
fn declared_after_parameters(signature: &str) -> Option<&str> {
    // The parameter list: the first `(` outside the type parameters (`fun <T : A<B>> f(`).
    let mut angle = 0i32;
    let mut open = None;
    for (i, c) in signature.char_indices() {
        match c {
            '<' => angle += 1,
            '>' => angle -= 1,
            '(' if angle == 0 => {
                open = Some(i);
                break;
            }
            _ => {}
        }
    }
    let close = matching_paren(signature, open?)?;
    Some(
        signature[close + 1..]
            .trim_start()
            .strip_prefix(':')?
            .trim_start(),
    )
}

/// The type an extension extends: Kotlin `fun Moshi.adapter(): …` and `fun <T>
/// Moshi.Builder.addLast(…)` give `Moshi` and `Builder`, a C# `static T Raise<T>(this
/// AsyncPolicy policy, …)` gives `AsyncPolicy`; `None` for a function that extends nothing,
/// and in other languages.
pub fn extension_receiver(lang: Lang, signature: &str) -> Option<&str> {
    match lang {
        Lang::Kotlin => kotlin_extension_receiver(signature),
        Lang::CSharp => csharp_extension_receiver(signature),
        _ => None,
    }
}

/// C#: the type of a method's first parameter when it is declared `this`.
fn csharp_extension_receiver(signature: &str) -> Option<&str> {
    let open = signature.find('(')?;
    let first = signature[open + 1..].trim_start().strip_prefix("this ")?;
    // `this IList<T> list`, `this Outcome<TResult>? outcome`, `this A.B c`: the name before
    // any type arguments.
    type_name(first.split('<').next().unwrap_or(first))
}

fn kotlin_extension_receiver(signature: &str) -> Option<&str> {
    let mut rest = &signature[signature.find("fun ")? + 4..];
    rest = rest.trim_start();
    // Type parameters: `fun <T : A<B>> …`.
    if rest.starts_with('<') {
        let mut depth = 0i32;
        let end = rest.char_indices().find_map(|(i, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
        rest = rest[end + 1..].trim_start();
    }
    // Up to the parameter list, outside the receiver's type arguments.
    let mut depth = 0i32;
    let open = rest.char_indices().find_map(|(i, c)| {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => return Some(i),
            _ => {}
        }
        None
    })?;
    let head = rest[..open].trim_end();
    let (receiver, _name) = head.rsplit_once('.')?;
    type_name(
        receiver
            .split('<')
            .next()
            .unwrap_or(receiver)
            .trim_end_matches('?'),
    )
}

/// Java and C#: the type before the method's name, `public <T> JsonAdapter<T> adapter(Type t)`
/// gives `JsonAdapter`; `None` for a constructor (`Builder(Moshi m)`) or a primitive.
fn java_return_type(signature: &str) -> Option<&str> {
    // The parameter list: the first `(` that is not an annotation's (`@Named("x")`).
    let bytes = signature.as_bytes();
    let mut i = 0;
    let mut angle = 0i32;
    let open = loop {
        match *bytes.get(i)? {
            b'@' => {
                i += 1;
                while bytes
                    .get(i)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b"_.".contains(b))
                {
                    i += 1;
                }
                while bytes.get(i) == Some(&b' ') {
                    i += 1;
                }
                if bytes.get(i) == Some(&b'(') {
                    i = matching_paren(signature, i)? + 1;
                }
                continue;
            }
            b'<' => angle += 1,
            b'>' => angle -= 1,
            b'(' if angle == 0 => break i,
            _ => {}
        }
        i += 1;
    };
    // Before it: the name, then the return type (its generic arguments skipped back over).
    let head = signature[..open].trim_end();
    let name_start = head
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |p| p + 1);
    let mut ty_end = head[..name_start].trim_end().len();
    let before = &head[..ty_end];
    if before.ends_with(']') {
        return None;
    }
    if before.ends_with('>') {
        let mut depth = 0i32;
        for (j, c) in before.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        ty_end = j;
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let ty_start = head[..ty_end]
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |p| p + 1);
    type_name(&head[ty_start..ty_end])
}

fn rust_return_type(signature: &str) -> Option<&str> {
    // The last `->` outside parentheses: a closure parameter's arrow is inside them.
    let mut depth = 0i32;
    let mut arrow = None;
    let bytes = signature.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'-' if depth == 0 && bytes.get(i + 1) == Some(&b'>') => arrow = Some(i + 2),
            _ => {}
        }
    }
    let mut ty = signature[arrow?..].trim_start();
    if let Some(w) = ty.find(" where") {
        ty = &ty[..w];
    }
    loop {
        let before = ty;
        ty = ty.trim_start_matches('&').trim_start();
        if ty.starts_with('\'') {
            ty = ty
                .split_once(char::is_whitespace)
                .map_or("", |(_, rest)| rest)
                .trim_start();
        }
        for word in ["mut ", "dyn ", "impl "] {
            if let Some(rest) = ty.strip_prefix(word) {
                ty = rest.trim_start();
            }
        }
        if ty == before {
            break;
        }
    }
    let end = ty
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(ty.len());
    let path = &ty[..end];
    let name = path.rsplit("::").next().unwrap_or(path);
    (!name.is_empty() && name.chars().next().is_some_and(char::is_uppercase)).then_some(name)
}

impl FileScope<'_> {
    /// The type `chain` (a receiver the parser wrote as calls without arguments) yields.
    pub(super) fn chain_type(&self, chain: &str, scope: Option<u32>) -> Option<String> {
        let mut links = chain.split('.');
        let root = links.next()?;
        let mut ty = match root {
            "self" => self.self_type(scope)?,
            _ if root.starts_with('<') => root.strip_prefix('<')?.strip_suffix('>')?.to_string(),
            _ => {
                let call = root.strip_suffix("()")?;
                let (owner, name) = match call.rsplit_once("::") {
                    Some((owner, name)) => (Some(owner), name),
                    None => (None, call),
                };
                let callees = match owner {
                    Some("Self") => self.members_of(&self.self_type(scope)?, name),
                    Some(owner) => {
                        let ty = owner.rsplit("::").next().unwrap_or(owner);
                        if !ty.chars().next().is_some_and(char::is_uppercase) {
                            return None;
                        }
                        self.nearest(self.members_of(ty, name))
                    }
                    None => self.bare_callees(name, scope),
                };
                self.returned(&callees)?
            }
        };
        // The parser bounds a chain's length.
        for link in links {
            let name = link.strip_suffix("()")?;
            ty = self.returned(&self.members_of(&ty, name))?;
        }
        Some(ty)
    }

    /// The callees a bare call `name()` in `scope` resolves to.
    fn bare_callees(&self, name: &str, scope: Option<u32>) -> Vec<u32> {
        self.resolve(&crate::model::Reference {
            kind: RefKind::Call,
            name,
            receiver: None,
            receiver_type: None,
            line: 0,
            scope,
        })
        .0
    }

    /// The one type `callees` return (`Self` read as each one's owner), if they agree. An
    /// overload whose signature was cut before its return type (a long parameter list, kept
    /// to a few lines) says nothing either way; one that declares none ends the chain.
    fn returned(&self, callees: &[u32]) -> Option<String> {
        let mut out: Option<String> = None;
        for &c in callees {
            let def: &Definition = self.g.def(c);
            let lang = self.g.file_of(c).lang;
            let declared = return_type(lang, &def.signature);
            if declared.is_none() && def.signature.ends_with('…') {
                continue;
            }
            let ty = match declared? {
                "Self" => self.g.owner_type(c)?,
                t => t.to_string(),
            };
            match &out {
                Some(o) if *o != ty => return None,
                _ => out = Some(ty),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::return_type;
    use crate::model::Lang;

    #[test]
    fn return_types_are_read_from_rust_signatures() {
        let rt = |s| return_type(Lang::Rust, s);
        assert_eq!(
            rt("pub fn only(&mut self, yes: bool) -> &mut Builder"),
            Some("Builder")
        );
        assert_eq!(rt("fn new() -> Self"), Some("Self"));
        assert_eq!(
            rt("fn get<'a>(&'a self) -> &'a mut Inner<'a>"),
            Some("Inner")
        );
        assert_eq!(rt("fn open(p: &Path) -> io::Result<File>"), Some("Result"));
        assert_eq!(
            rt("fn f(g: impl Fn(u8) -> Wrong) -> crate::a::Right"),
            Some("Right")
        );
        assert_eq!(rt("fn boxed(&self) -> Box<dyn Sink>"), Some("Box"));
        assert_eq!(
            rt("fn it(&self) -> impl Iterator<Item = u8>"),
            Some("Iterator")
        );
        assert_eq!(rt("fn build<T>(self) -> T where T: From<u8>"), Some("T"));
        assert_eq!(rt("fn nothing(&self)"), None);
        assert_eq!(rt("fn tuple(&self) -> (A, B)"), None);
        assert_eq!(rt("fn raw(&self) -> usize"), None);
        assert_eq!(return_type(Lang::Python, "def f(self) -> Builder:"), None);
    }

    #[test]
    fn return_types_are_read_from_kotlin_java_and_csharp_signatures() {
        let kt = |s| return_type(Lang::Kotlin, s);
        assert_eq!(kt("fun add(adapter: Any): Builder"), Some("Builder"));
        assert_eq!(
            kt("public fun <T : Comparable<T>> adapter(type: Type): JsonAdapter<T>?"),
            Some("JsonAdapter")
        );
        assert_eq!(
            kt("fun Moshi.Builder.addLast(f: (Int) -> Unit): Moshi.Builder"),
            Some("Builder")
        );
        assert_eq!(kt("fun build() = Moshi(this)"), None);
        assert_eq!(kt("override fun hashCode(): Int"), Some("Int"));
        assert_eq!(kt("fun close()"), None);
        assert_eq!(kt("class Builder(val moshi: Moshi)"), None);
        let ext = |s| super::extension_receiver(Lang::Kotlin, s);
        assert_eq!(
            ext("inline fun <reified T> Moshi.adapter(): JsonAdapter<T>"),
            Some("Moshi")
        );
        assert_eq!(
            ext("fun Moshi.Builder.addLast(f: (Int) -> Unit): Moshi.Builder"),
            Some("Builder")
        );
        assert_eq!(ext("private fun TypeSpec?.rule()"), Some("TypeSpec"));
        assert_eq!(ext("fun <K, V> Map<K, V>.flip(): Map<V, K>"), Some("Map"));
        assert_eq!(ext("fun add(x: Any.Thing): Builder"), None);
        assert_eq!(
            super::extension_receiver(Lang::Java, "fun Moshi.adapter()"),
            None
        );
        let php = |s| return_type(Lang::Php, s);
        assert_eq!(
            php("public function get(string $pattern, $callable): RouteInterface"),
            Some("RouteInterface")
        );
        assert_eq!(
            php("function make(): ?\\Slim\\Routing\\Route"),
            Some("Route")
        );
        assert_eq!(
            php("public function withName(string $n): static"),
            Some("Self")
        );
        assert_eq!(php("public function value(): int|string"), None);
        assert_eq!(php("public function run(array $a = [])"), None);
        let cs = |s| super::extension_receiver(Lang::CSharp, s);
        assert_eq!(
            cs("public static Task RaiseAsync<TException>(this AsyncPolicy policy, int n)"),
            Some("AsyncPolicy")
        );
        assert_eq!(
            cs("internal static bool IsOk<T>(this Outcome<T>? outcome)"),
            Some("Outcome")
        );
        assert_eq!(
            cs("public static int Count(this Polly.Wrap.IPolicyWrap w)"),
            Some("IPolicyWrap")
        );
        // A built-in type is no repository type; a method without `this` extends nothing.
        assert_eq!(cs("public static bool Empty(this string s)"), None);
        assert_eq!(cs("public void Add(Policy thisPolicy)"), None);
        let ts = |s| return_type(Lang::TypeScript, s);
        assert_eq!(
            ts("min(minLength: number, message?: errorUtil.ErrMessage): ZodString"),
            Some("ZodString")
        );
        assert_eq!(
            ts("static create<T>(params?: Raw<T>): ZodArray<T>"),
            Some("ZodArray")
        );
        assert_eq!(
            ts("async parse(data: unknown): Promise<Output>"),
            Some("Promise")
        );
        assert_eq!(ts("optional(): this"), Some("Self"));
        assert_eq!(ts("get value(): number"), None);
        assert_eq!(ts("constructor(def: Def)"), None);
        let java = |s| return_type(Lang::Java, s);
        assert_eq!(java("public Builder add(Object adapter)"), Some("Builder"));
        assert_eq!(
            java("@CheckReturnValue public <T> JsonAdapter<T> adapter(Type type)"),
            Some("JsonAdapter")
        );
        assert_eq!(
            java("@SuppressWarnings(\"unchecked\") public static Map.Entry<K, V> entry(K k, V v)"),
            Some("Entry")
        );
        assert_eq!(java("public Builder(Moshi moshi)"), None);
        assert_eq!(java("Builder(Moshi moshi)"), None);
        assert_eq!(java("public void close()"), None);
        assert_eq!(java("int size()"), None);
        assert_eq!(java("public String[] names()"), None);
        assert_eq!(
            return_type(
                Lang::CSharp,
                "public static IMapper CreateMapper(this MapperConfiguration c)"
            ),
            Some("IMapper")
        );
    }
}
