//! The crate's own `macro_rules!` macros, expanded where code invokes them
//! (in an expression or a statement), so the requests and the calls of
//! their bodies are read at the invocation, as rustc compiles them. The
//! expansion is the CRD derivation's ([`Macros`]); an invocation it cannot
//! expand is left as written.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use syn::visit_mut::VisitMut;

pub(crate) use crate::manifests::read::macros::Macros;

/// How deep macros that invoke macros are expanded.
const DEPTH: usize = 8;

/// The macros `files` define, in modules and in function bodies alike.
pub(crate) fn collect<'f>(files: impl IntoIterator<Item = &'f syn::File>) -> Macros {
    struct Definitions(Macros);
    impl<'ast> syn::visit::Visit<'ast> for Definitions {
        fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
            self.0
                .collect(std::slice::from_ref(&syn::Item::Macro(item.clone())));
        }
    }
    let mut definitions = Definitions(Macros::default());
    for file in files {
        syn::visit::Visit::visit_file(&mut definitions, file);
    }
    definitions.0
}

/// Replaces each invocation of one of `macros` in the bodies of `file`
/// with its expansion, placed at the invocation.
pub(crate) fn expand(macros: &Macros, file: &mut syn::File) {
    if !macros.is_empty() {
        Expander { macros, depth: 0 }.visit_file_mut(file);
    }
}

/// `tokens`, every one placed at `span`.
fn placed(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), placed(g.stream(), span));
                group.set_span(span);
                TokenTree::Group(group)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}

/// Puts the expansions in place.
struct Expander<'m> {
    macros: &'m Macros,
    depth: usize,
}

impl Expander<'_> {
    /// `mac` expanded, as a block expression.
    fn block(&self, mac: &syn::Macro) -> Option<syn::Expr> {
        if self.depth >= DEPTH {
            return None;
        }
        let name = mac.path.get_ident()?;
        let tokens = self.macros.expansion(&name.to_string(), &mac.tokens)?;
        let braced = TokenTree::Group(Group::new(Delimiter::Brace, placed(tokens, name.span())));
        let block: syn::Block = syn::parse2(TokenStream::from(braced)).ok()?;
        Some(syn::Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block,
        }))
    }

    fn descend(&mut self, expr: &mut syn::Expr) {
        self.depth += 1;
        self.visit_expr_mut(expr);
        self.depth -= 1;
    }
}

impl VisitMut for Expander<'_> {
    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        if let syn::Expr::Macro(m) = expr
            && let Some(expanded) = self.block(&m.mac)
        {
            *expr = expanded;
            self.descend(expr);
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
    fn visit_stmt_mut(&mut self, stmt: &mut syn::Stmt) {
        if let syn::Stmt::Macro(m) = stmt
            && let Some(mut expanded) = self.block(&m.mac)
        {
            self.descend(&mut expanded);
            *stmt = syn::Stmt::Expr(expanded, m.semi_token);
            return;
        }
        syn::visit_mut::visit_stmt_mut(self, stmt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(source: &str) -> String {
        let mut file: syn::File = syn::parse_str(source).unwrap();
        let macros = collect([&file]);
        expand(&macros, &mut file);
        quote::ToTokens::to_token_stream(&file.items[1]).to_string()
    }

    #[test]
    fn a_macro_defined_in_a_body_is_expanded_there() {
        let source = r"
            use kube::Api;
            async fn reconcile(hooks: Api<MutatingWebhookConfiguration>) {
                macro_rules! apply { ($api:expr) => { $api.patch(NAME, &pp, &Patch::Apply(&hook)).await? }; }
                apply!(hooks);
            }
        ";
        assert!(
            expanded(source).contains("{ hooks . patch"),
            "{}",
            expanded(source)
        );
    }

    #[test]
    fn an_invocation_in_a_body_becomes_its_expansion() {
        let source = r#"
            macro_rules! ensure {
                (each $($api:ident),+) => { $( $api.list(&Default::default()).await?; )+ };
                ($api:expr, $name:expr) => {
                    if $api.get_opt($name).await?.is_none() { $api.create(&PostParams::default(), &fresh($name)).await?; }
                };
            }
            async fn run(secrets: Api<Secret>, maps: Api<ConfigMap>, pods: Api<Pod>) {
                ensure!(secrets, "token");
                let all = ensure!(each maps, pods);
                log!("kept {}", all.len());
            }
        "#;
        let text = expanded(source);
        assert!(text.contains("secrets . get_opt"), "{text}");
        assert!(text.contains("secrets . create"), "{text}");
        assert!(text.contains("maps . list"), "{text}");
        assert!(text.contains("pods . list"), "{text}");
        // A macro of another crate is left as written.
        assert!(
            text.contains("log ! (\"kept {}\" , all . len ())"),
            "{text}"
        );
    }
}
