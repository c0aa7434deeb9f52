//! `macro_rules!` at item position, expanded the way rustc would for the
//! macros operators write to declare several similar kinds: arms matched in
//! order, fragments (`$name:ident`, `literal`, `ty`, `expr`, `path`, `tt`,
//! ...), `$(...)` repetitions, `$crate`. What this cannot expand (a
//! fragment it cannot delimit, an invocation no arm matches, an expansion
//! that is not items) is reported by the macro's name and place when the
//! macro declares a `CustomResource`, never guessed.

use std::collections::HashMap;

use proc_macro2::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};

/// The `macro_rules!` definitions of a crate, by name.
#[derive(Debug, Default)]
pub struct Macros {
    rules: HashMap<String, Vec<Rule>>,
}

#[derive(Debug, Clone)]
struct Rule {
    matcher: Vec<Matcher>,
    transcriber: TokenStream,
}

#[derive(Debug, Clone)]
enum Matcher {
    /// A token that must be there as written.
    Token(TokenTree),
    /// A delimited group whose content matches the inner matchers.
    Group(Delimiter, Vec<Matcher>),
    /// `$name:kind`.
    Fragment(String, String),
    /// `$( ... ) sep? op`.
    Repeat(Vec<Matcher>, Option<TokenTree>, char),
}

/// What a fragment bound to: tokens, or one set of bindings per repetition.
#[derive(Debug, Clone)]
enum Binding {
    One(Vec<TokenTree>),
    Many(Vec<HashMap<String, Binding>>),
}

/// Why an invocation was not expanded.
#[derive(Debug, Clone)]
pub struct Unexpanded {
    pub span: Span,
    pub message: String,
}

impl Macros {
    /// Collects every `macro_rules! name { .. }` among `items` (and inline
    /// modules). A later definition of the same name replaces an earlier
    /// one, as textual scoping mostly makes it.
    pub fn collect(&mut self, items: &[syn::Item]) {
        for item in items {
            match item {
                syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                    if let Some(name) = &m.ident
                        && let Some(rules) = parse_rules(m.mac.tokens.clone())
                    {
                        self.rules.insert(name.to_string(), rules);
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.collect(inner);
                    }
                }
                _ => {}
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The tokens an invocation of the macro `name` with `input` expands
    /// to, if it is one of these and an arm matches.
    pub fn expansion(&self, name: &str, input: &TokenStream) -> Option<TokenStream> {
        expand_tokens(self.rules.get(name)?, input).ok()
    }

    /// Replaces each item-position invocation of a known macro by its
    /// expansion (recursively, to a depth of 16); invocations it cannot
    /// expand are left as they are and reported when their macro's body
    /// declares a `CustomResource` (others cannot hide a kind).
    pub fn expand(&self, items: Vec<syn::Item>, problems: &mut Vec<Unexpanded>) -> Vec<syn::Item> {
        self.expand_depth(items, problems, 0)
    }

    fn expand_depth(
        &self,
        items: Vec<syn::Item>,
        problems: &mut Vec<Unexpanded>,
        depth: usize,
    ) -> Vec<syn::Item> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item {
                syn::Item::Macro(m) if m.ident.is_none() => {
                    let Some(name) = m.mac.path.segments.last().map(|s| s.ident.to_string()) else {
                        out.push(syn::Item::Macro(m));
                        continue;
                    };
                    let Some(rules) = self.rules.get(&name) else {
                        out.push(syn::Item::Macro(m));
                        continue;
                    };
                    let declares_kind = rules
                        .iter()
                        .any(|r| mentions(&r.transcriber, "CustomResource"));
                    match (depth < 16).then(|| expand_call(rules, &m.mac.tokens)) {
                        Some(Ok(expanded)) => {
                            out.extend(self.expand_depth(expanded, problems, depth + 1));
                        }
                        Some(Err(why)) if declares_kind => {
                            problems.push(Unexpanded {
                                span: m.mac.path.segments[0].ident.span(),
                                message: format!("rsop cannot expand `{name}!` here: {why}"),
                            });
                            out.push(syn::Item::Macro(m));
                        }
                        None if declares_kind => {
                            problems.push(Unexpanded {
                                span: m.mac.path.segments[0].ident.span(),
                                message: format!("rsop cannot expand `{name}!` here: it expands into itself too deeply"),
                            });
                            out.push(syn::Item::Macro(m));
                        }
                        _ => out.push(syn::Item::Macro(m)),
                    }
                }
                syn::Item::Mod(mut m) => {
                    if let Some((brace, inner)) = m.content.take() {
                        m.content = Some((brace, self.expand_depth(inner, problems, depth)));
                    }
                    out.push(syn::Item::Mod(m));
                }
                other => out.push(other),
            }
        }
        out
    }
}

/// Whether `tokens` contain the identifier `name`, at any depth.
fn mentions(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions(&g.stream(), name),
        _ => false,
    })
}

/// `(matcher) => { transcriber } ; ...`
fn parse_rules(tokens: TokenStream) -> Option<Vec<Rule>> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut rules = Vec::new();
    let mut i = 0;
    while i < trees.len() {
        let TokenTree::Group(matcher) = &trees[i] else {
            return None;
        };
        let arrow = matches!((trees.get(i + 1), trees.get(i + 2)),
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == '=' && b.as_char() == '>');
        if !arrow {
            return None;
        }
        let TokenTree::Group(transcriber) = trees.get(i + 3)? else {
            return None;
        };
        rules.push(Rule {
            matcher: parse_matcher(matcher.stream())?,
            transcriber: transcriber.stream(),
        });
        i += 4;
        if matches!(trees.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
            i += 1;
        }
    }
    Some(rules)
}

fn parse_matcher(tokens: TokenStream) -> Option<Vec<Matcher>> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Punct(p) if p.as_char() == '$' => match trees.get(i + 1) {
                Some(TokenTree::Ident(name)) => {
                    let colon =
                        matches!(trees.get(i + 2), Some(TokenTree::Punct(c)) if c.as_char() == ':');
                    let Some(TokenTree::Ident(kind)) = trees.get(i + 3).filter(|_| colon) else {
                        return None;
                    };
                    out.push(Matcher::Fragment(name.to_string(), kind.to_string()));
                    i += 4;
                }
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    let inner = parse_matcher(g.stream())?;
                    let (sep, op, used) = repetition_tail(&trees[i + 2..])?;
                    out.push(Matcher::Repeat(inner, sep, op));
                    i += 2 + used;
                }
                _ => return None,
            },
            TokenTree::Group(g) => {
                out.push(Matcher::Group(g.delimiter(), parse_matcher(g.stream())?));
                i += 1;
            }
            t => {
                out.push(Matcher::Token(t.clone()));
                i += 1;
            }
        }
    }
    Some(out)
}

/// After `$( .. )`: an optional separator and `*`, `+` or `?`.
fn repetition_tail(rest: &[TokenTree]) -> Option<(Option<TokenTree>, char, usize)> {
    let op = |t: &TokenTree| match t {
        TokenTree::Punct(p) if matches!(p.as_char(), '*' | '+' | '?') => Some(p.as_char()),
        _ => None,
    };
    let first = rest.first()?;
    if let Some(o) = op(first) {
        return Some((None, o, 1));
    }
    let o = op(rest.get(1)?)?;
    Some((Some(first.clone()), o, 2))
}

/// The items of the first arm that matches `input`.
fn expand_call(rules: &[Rule], input: &TokenStream) -> Result<Vec<syn::Item>, String> {
    syn::parse2::<syn::File>(expand_tokens(rules, input)?)
        .map(|f| f.items)
        .map_err(|e| format!("its expansion is not a list of items ({e})"))
}

/// The tokens the first arm that matches `input` expands to.
fn expand_tokens(rules: &[Rule], input: &TokenStream) -> Result<TokenStream, String> {
    let input: Vec<TokenTree> = input.clone().into_iter().collect();
    for rule in rules {
        let mut bindings = HashMap::new();
        if match_all(&rule.matcher, &input, &mut bindings) {
            return transcribe(&rule.transcriber, &bindings);
        }
    }
    Err("no arm of the macro matches this invocation as rsop reads it".into())
}

fn match_all(
    matchers: &[Matcher],
    input: &[TokenTree],
    bindings: &mut HashMap<String, Binding>,
) -> bool {
    let mut pos = 0;
    if !match_seq(matchers, input, &mut pos, bindings, None) {
        return false;
    }
    pos == input.len()
}

/// `follow` is the token that comes after these matchers (a repetition's
/// separator, or what follows the repetition), which ends a fragment at
/// their end.
fn match_seq(
    matchers: &[Matcher],
    input: &[TokenTree],
    pos: &mut usize,
    bindings: &mut HashMap<String, Binding>,
    follow: Option<&TokenTree>,
) -> bool {
    for (k, m) in matchers.iter().enumerate() {
        let next = matchers.get(k + 1);
        let next_token = match next {
            Some(Matcher::Token(t)) => Some(t),
            Some(_) => None,
            None => follow,
        };
        match m {
            Matcher::Token(t) => {
                if !input.get(*pos).is_some_and(|i| same_token(i, t)) {
                    return false;
                }
                *pos += 1;
            }
            Matcher::Group(delim, inner) => {
                let Some(TokenTree::Group(g)) = input.get(*pos) else {
                    return false;
                };
                if g.delimiter() != *delim {
                    return false;
                }
                let content: Vec<TokenTree> = g.stream().into_iter().collect();
                if !match_all(inner, &content, bindings) {
                    return false;
                }
                *pos += 1;
            }
            Matcher::Fragment(name, kind) => {
                let Some(taken) = take_fragment(kind, &input[*pos..], next, next_token) else {
                    return false;
                };
                bindings.insert(
                    name.clone(),
                    Binding::One(input[*pos..*pos + taken].to_vec()),
                );
                *pos += taken;
            }
            Matcher::Repeat(inner, sep, op) => {
                let after = match next {
                    Some(Matcher::Token(t)) => Some(t),
                    Some(_) => None,
                    None => follow,
                };
                // A fragment at the end of a run ends where the separator,
                // or else the next run, begins.
                let first = match inner.first() {
                    Some(Matcher::Token(t)) => Some(t),
                    _ => None,
                };
                let inner_follow = sep.as_ref().or(first).or(after);
                let mut runs = Vec::new();
                loop {
                    if !runs.is_empty()
                        && let Some(s) = sep
                    {
                        if !input.get(*pos).is_some_and(|i| same_token(i, s)) {
                            break;
                        }
                        // The separator is consumed only if another run follows.
                        let mut trial = *pos + 1;
                        let mut b = HashMap::new();
                        if !match_seq(inner, input, &mut trial, &mut b, inner_follow)
                            || trial == *pos + 1
                        {
                            break;
                        }
                        *pos = trial;
                        runs.push(b);
                    } else {
                        let mut trial = *pos;
                        let mut b = HashMap::new();
                        if !match_seq(inner, input, &mut trial, &mut b, inner_follow)
                            || trial == *pos
                        {
                            break;
                        }
                        *pos = trial;
                        runs.push(b);
                    }
                    if *op == '?' {
                        break;
                    }
                }
                if *op == '+' && runs.is_empty() {
                    return false;
                }
                for name in fragment_names(inner) {
                    bindings.insert(
                        name.clone(),
                        Binding::Many(
                            runs.iter()
                                .map(|r| r.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                                .collect(),
                        ),
                    );
                }
            }
        }
    }
    true
}

fn fragment_names(matchers: &[Matcher]) -> Vec<String> {
    let mut out = Vec::new();
    for m in matchers {
        match m {
            Matcher::Fragment(n, _) => out.push(n.clone()),
            Matcher::Group(_, inner) | Matcher::Repeat(inner, _, _) => {
                out.extend(fragment_names(inner));
            }
            Matcher::Token(_) => {}
        }
    }
    out
}

/// How many token trees a fragment of `kind` takes at the start of `input`:
/// one for `ident`, `literal`, `lifetime`, `tt`, `block`; for the others, up
/// to the token the next matcher expects (or the end).
fn take_fragment(
    kind: &str,
    input: &[TokenTree],
    next: Option<&Matcher>,
    next_token: Option<&TokenTree>,
) -> Option<usize> {
    let first = input.first()?;
    match kind {
        "ident" => matches!(first, TokenTree::Ident(_)).then_some(1),
        "tt" => Some(1),
        "block" => {
            matches!(first, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace).then_some(1)
        }
        "literal" => match first {
            TokenTree::Literal(_) => Some(1),
            TokenTree::Ident(i) if i == "true" || i == "false" => Some(1),
            TokenTree::Punct(p) if p.as_char() == '-' => {
                matches!(input.get(1), Some(TokenTree::Literal(_))).then_some(2)
            }
            _ => None,
        },
        "lifetime" => matches!(first, TokenTree::Punct(p) if p.as_char() == '\'').then_some(2),
        _ => {
            // In a type or path, a separator between `<` and `>` belongs to it.
            let angles = matches!(kind, "ty" | "path");
            let end = match (next_token, next) {
                (Some(t), _) => {
                    let mut depth = 0usize;
                    input
                        .iter()
                        .position(|i| {
                            if let TokenTree::Punct(p) = i
                                && angles
                            {
                                match p.as_char() {
                                    '<' => depth += 1,
                                    '>' => depth = depth.saturating_sub(1),
                                    _ => {}
                                }
                            }
                            depth == 0 && same_token(i, t)
                        })
                        .unwrap_or(input.len())
                }
                (None, Some(_)) => return None,
                (None, None) => input.len(),
            };
            (end > 0 || kind == "vis").then_some(end)
        }
    }
}

fn same_token(a: &TokenTree, b: &TokenTree) -> bool {
    match (a, b) {
        (TokenTree::Ident(x), TokenTree::Ident(y)) => x == y,
        (TokenTree::Punct(x), TokenTree::Punct(y)) => x.as_char() == y.as_char(),
        (TokenTree::Literal(x), TokenTree::Literal(y)) => x.to_string() == y.to_string(),
        (TokenTree::Group(x), TokenTree::Group(y)) => {
            x.delimiter() == y.delimiter() && x.stream().to_string() == y.stream().to_string()
        }
        _ => false,
    }
}

fn transcribe(
    tokens: &TokenStream,
    bindings: &HashMap<String, Binding>,
) -> Result<TokenStream, String> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Punct(p) if p.as_char() == '$' => match trees.get(i + 1) {
                Some(TokenTree::Ident(name)) if name == "crate" => {
                    out.push(TokenTree::Ident(Ident::new("crate", name.span())));
                    i += 2;
                }
                Some(TokenTree::Ident(name)) => match bindings.get(&name.to_string()) {
                    Some(Binding::One(t)) => {
                        // A fragment other than a token stays one unit, as
                        // rustc keeps it (an invisible group).
                        if t.len() == 1 {
                            out.extend(t.iter().cloned());
                        } else {
                            out.push(TokenTree::Group(Group::new(
                                Delimiter::None,
                                t.iter().cloned().collect(),
                            )));
                        }
                        i += 2;
                    }
                    Some(Binding::Many(_)) => {
                        return Err(format!("`${name}` is used outside its repetition"));
                    }
                    None => {
                        out.push(trees[i].clone());
                        i += 1;
                    }
                },
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    let (sep, _, used) = repetition_tail(&trees[i + 2..])
                        .ok_or("a repetition without `*`, `+` or `?`")?;
                    let runs = repeated_runs(&g.stream(), bindings)?;
                    for (n, run) in runs.iter().enumerate() {
                        if n > 0
                            && let Some(s) = &sep
                        {
                            out.push(s.clone());
                        }
                        let mut scoped = bindings.clone();
                        scoped.extend(run.iter().map(|(k, v)| (k.clone(), v.clone())));
                        out.extend(transcribe(&g.stream(), &scoped)?);
                    }
                    i += 2 + used;
                }
                _ => {
                    out.push(trees[i].clone());
                    i += 1;
                }
            },
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), transcribe(&g.stream(), bindings)?);
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
                i += 1;
            }
            t => {
                out.push(t.clone());
                i += 1;
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// The runs of a transcriber repetition: those of the repeated fragments it
/// names (which must agree in number).
fn repeated_runs(
    body: &TokenStream,
    bindings: &HashMap<String, Binding>,
) -> Result<Vec<HashMap<String, Binding>>, String> {
    let mut runs: Option<Vec<HashMap<String, Binding>>> = None;
    for name in dollar_names(body) {
        if let Some(Binding::Many(r)) = bindings.get(&name) {
            match &runs {
                Some(existing) if existing.len() != r.len() => {
                    return Err("repetitions of different lengths".into());
                }
                Some(_) => {}
                None => runs = Some(r.clone()),
            }
        }
    }
    runs.ok_or_else(|| "a repetition that repeats no fragment".into())
}

fn dollar_names(tokens: &TokenStream) -> Vec<String> {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let mut out = Vec::new();
    for (i, t) in trees.iter().enumerate() {
        match t {
            TokenTree::Punct(p) if p.as_char() == '$' => {
                if let Some(TokenTree::Ident(n)) = trees.get(i + 1) {
                    out.push(n.to_string());
                }
            }
            TokenTree::Group(g) => out.extend(dollar_names(&g.stream())),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(source: &str) -> (Vec<syn::Item>, Vec<Unexpanded>) {
        let file = syn::parse_file(source).unwrap();
        let mut macros = Macros::default();
        macros.collect(&file.items);
        let mut problems = Vec::new();
        let items = macros.expand(file.items, &mut problems);
        (items, problems)
    }

    fn structs(items: &[syn::Item]) -> Vec<String> {
        items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Struct(s) => Some(s.ident.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn expands_kinds_declared_by_a_macro() {
        let (items, problems) = expand(
            r#"
            macro_rules! kind {
                ($spec:ident, $kind:literal, $($field:ident: $ty:ty),* $(,)?) => {
                    #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
                    #[kube(group = "m.io", version = "v1", kind = $kind)]
                    pub struct $spec { $(pub $field: $ty),* }
                };
            }
            kind!(CacheSpec, "Cache", size: i32, name: String);
            kind!(QueueSpec, "Queue", depth: Option<u32>, labels: BTreeMap<String, String>,);
            "#,
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(structs(&items), ["CacheSpec", "QueueSpec"]);
        let syn::Item::Struct(cache) = items
            .iter()
            .find(|i| matches!(i, syn::Item::Struct(_)))
            .unwrap()
        else {
            unreachable!()
        };
        assert_eq!(cache.fields.len(), 2);
        let syn::Item::Struct(queue) = items
            .iter()
            .rfind(|i| matches!(i, syn::Item::Struct(_)))
            .unwrap()
        else {
            unreachable!()
        };
        assert_eq!(
            queue.fields.len(),
            2,
            "a `,` inside `<..>` stays in the type"
        );
    }

    #[test]
    fn reports_a_kind_macro_it_cannot_match() {
        let (items, problems) = expand(
            r"
            macro_rules! kind {
                ($spec:ident) => {
                    #[derive(CustomResource)]
                    pub struct $spec {}
                };
            }
            kind!(1 + 2);
            ",
        );
        assert!(structs(&items).is_empty());
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].message.contains("rsop cannot expand `kind!`"),
            "{problems:?}"
        );
    }

    #[test]
    fn leaves_other_macros_alone() {
        let (items, problems) = expand(
            "macro_rules! noop { () => {}; }\nnoop!();\nlazy_static! { static ref X: u8 = 1; }\n",
        );
        assert!(problems.is_empty());
        assert_eq!(
            items.len(),
            2,
            "the definition and the unknown invocation stay"
        );
    }
}
