use super::*;
use crate::core::config::Config;

fn declaration(
    name: Option<&'static str>,
    default_name: &'static str,
    line: u32,
    config: Config,
) -> Declaration {
    Declaration {
        name,
        default_name,
        config,
        location: Location {
            file: "lib.rs",
            line,
            column: 1,
        },
        fallbacks: crate::registry::declaration::Fallbacks::new(None, false),
    }
}

fn leak(declarations: Vec<Declaration>) -> &'static [Declaration] {
    Box::leak(declarations.into_boxed_slice())
}

#[test]
fn declarations_sharing_a_name_share_one_breaker_and_differences_are_reported() {
    let strict = Config::builder().threshold(10.0).build().unwrap();
    let list = leak(vec![
        declaration(Some("payments"), "app::charge", 10, Config::default()),
        declaration(Some("payments"), "app::refund", 20, Config::default()),
        declaration(Some("payments"), "app::void", 30, strict),
    ]);
    let registry = Registry::from_declarations(list);
    assert_eq!(registry.breakers().len(), 1);
    let a = registry.declared(&list[0]);
    let b = registry.declared(&list[1]);
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(a.name(), "payments");
    assert_eq!(registry.conflicts().len(), 1);
    assert_eq!(registry.conflicts()[0].differing[0].0.line, 30);
    assert_eq!(
        a.config().threshold().percent(),
        50.0,
        "the first declaration's options are kept"
    );
}

#[test]
fn colliding_default_names_are_made_unique_in_source_order() {
    let list = leak(vec![
        declaration(None, "app::Client::fetch", 40, Config::default()),
        declaration(None, "app::Client::fetch", 12, Config::default()),
    ]);
    let registry = Registry::from_declarations(list);
    assert_eq!(registry.declared(&list[1]).name(), "app::Client::fetch");
    assert_eq!(registry.declared(&list[0]).name(), "app::Client::fetch#2");
    assert!(registry.conflicts().is_empty());
    let clashes = registry.clashes();
    assert_eq!(clashes.len(), 1, "the renaming is reported: {clashes:?}");
    assert_eq!(clashes[0].wanted, "app::Client::fetch");
    assert_eq!(clashes[0].given, "app::Client::fetch#2");
    assert_eq!(clashes[0].at.line, 40);
}

#[test]
fn declared_breakers_are_listed_before_any_call() {
    let list = leak(vec![declaration(None, "app::quote", 1, Config::default())]);
    let registry = Registry::from_declarations(list);
    let listed = registry.snapshot();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name(), "app::quote");
    assert_eq!(registry.declared_at("app::quote")[0].line, 1);
}
