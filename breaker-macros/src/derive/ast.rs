//! The derive's input as the expansion needs it, with every `#[breaker(..)]` mark checked.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, Ident, LitStr, Member};

use crate::errors::Errors;

/// What a variant (or a struct) says about the dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// The dependency is unwell.
    Failure,
    /// The dependency answered correctly: recorded as a success.
    Healthy,
    /// Record nothing.
    Ignore,
    /// Ask the one field.
    Transparent,
}

const MARKS: &str = "`failure`, `healthy`, `ignore` or `transparent`";

impl Mark {
    fn from_word(word: &str) -> Option<Mark> {
        match word {
            "failure" => Some(Mark::Failure),
            "healthy" => Some(Mark::Healthy),
            "ignore" => Some(Mark::Ignore),
            "transparent" => Some(Mark::Transparent),
            _ => None,
        }
    }
}

/// How one variant, or the struct, is classified.
pub(crate) enum Rule {
    Fixed(Mark),
    /// Delegates to this field.
    Field(Member, Box<syn::Type>),
}

pub(crate) struct Variant {
    pub(crate) ident: Ident,
    pub(crate) rule: Rule,
}

pub(crate) enum Body {
    Enum(Vec<Variant>),
    Struct(Rule),
}

pub(crate) struct Container<'a> {
    pub(crate) input: &'a DeriveInput,
    pub(crate) krate: syn::Path,
    pub(crate) body: Body,
}

/// The marks found in one item's `#[breaker(..)]` attributes.
#[derive(Default)]
struct Marks {
    mark: Option<(Mark, Span)>,
    default: Option<(Mark, Span)>,
    krate: Option<syn::Path>,
}

impl<'a> Container<'a> {
    pub(crate) fn from_input(input: &'a DeriveInput) -> (Option<Container<'a>>, Errors) {
        let mut errors = Errors::default();
        let marks = read_marks(&input.attrs, Place::Container, &mut errors);
        let default = marks.default.map_or(Mark::Failure, |(mark, _)| mark);
        let krate = marks
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::breaker_runtime));
        for field in fields_of(&input.data) {
            if let Some(attr) = field.attrs.iter().find(|a| a.path().is_ident("breaker")) {
                errors.push_spanned(
                    attr,
                    "marks go on the variant, not on its field: write `#[breaker(...)]` above the variant",
                );
            }
        }
        let body = match &input.data {
            Data::Enum(data) => {
                if let Some((_, span)) = marks.mark {
                    errors.push(span, "on an enum, marks go on its variants; to set the mark of every unmarked variant write `#[breaker(default = \"...\")]`");
                }
                let variants = data
                    .variants
                    .iter()
                    .map(|variant| {
                        let marks = read_marks(&variant.attrs, Place::Variant, &mut errors);
                        let mark = marks.mark.unwrap_or((default, variant.ident.span()));
                        Variant {
                            ident: variant.ident.clone(),
                            rule: rule(mark, &variant.fields, &mut errors),
                        }
                    })
                    .collect();
                Body::Enum(variants)
            }
            Data::Struct(data) => {
                if let (Some((Mark::Transparent, span)), Some(_)) = (marks.mark, marks.default) {
                    errors.push(span, "`transparent` asks the field, so a `default` beside it would never apply; keep one");
                }
                let mark = marks
                    .mark
                    .or(marks.default)
                    .unwrap_or((Mark::Failure, input.ident.span()));
                Body::Struct(rule(mark, &data.fields, &mut errors))
            }
            Data::Union(data) => {
                errors.push(
                    data.union_token.span,
                    "#[derive(IsFailure)] works on enums and structs, not unions",
                );
                return (None, errors);
            }
        };
        (Some(Container { input, krate, body }), errors)
    }
}

fn fields_of(data: &Data) -> Vec<&syn::Field> {
    match data {
        Data::Enum(data) => data.variants.iter().flat_map(|v| v.fields.iter()).collect(),
        Data::Struct(data) => data.fields.iter().collect(),
        Data::Union(data) => data.fields.named.iter().collect(),
    }
}

/// The `crate = path` a container names, for the stub emitted beside errors.
pub(crate) fn crate_path(input: &DeriveInput) -> syn::Path {
    let mut ignored = Errors::default();
    read_marks(&input.attrs, Place::Container, &mut ignored)
        .krate
        .unwrap_or_else(|| syn::parse_quote!(::breaker_runtime))
}

fn rule((mark, span): (Mark, Span), fields: &Fields, errors: &mut Errors) -> Rule {
    if mark != Mark::Transparent {
        return Rule::Fixed(mark);
    }
    let mut iter = fields.iter();
    match (iter.next(), iter.next()) {
        (Some(field), None) => {
            let member = field
                .ident
                .clone()
                .map_or_else(|| Member::Unnamed(0.into()), Member::Named);
            Rule::Field(member, Box::new(field.ty.clone()))
        }
        _ => {
            errors.push(
                span,
                format!(
                    "`transparent` asks the one field whether it is a failure, but this has {} fields; give it exactly one, or mark it `failure`, `healthy` or `ignore`",
                    fields.len()
                ),
            );
            Rule::Fixed(Mark::Failure)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Container,
    Variant,
}

fn read_marks(attrs: &[Attribute], place: Place, errors: &mut Errors) -> Marks {
    let mut marks = Marks::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("breaker")) {
        let result = attr.parse_nested_meta(|meta| {
            let path_span = meta.path.span();
            if meta.path.is_ident("default") {
                let value = meta.value()?;
                let Ok(value) = value.parse::<LitStr>() else {
                    return Err(value.error("`default` takes a string: write `default = \"healthy\"` (or \"failure\", \"ignore\")"));
                };
                if place == Place::Variant {
                    errors.push(path_span, "`default` goes on the enum, not on a variant; mark the variant itself with failure, healthy or ignore");
                    return Ok(());
                }
                match Mark::from_word(&value.value()) {
                    Some(Mark::Transparent) | None => errors.push(
                        value.span(),
                        format!("unknown default `{}`; write `failure`, `healthy` or `ignore`", value.value()),
                    ),
                    Some(mark) => set_once(&mut marks.default, (mark, value.span()), "default", errors),
                }
                return Ok(());
            }
            if meta.path.is_ident("crate") {
                let value = meta.value()?;
                let path: syn::Path = if value.peek(LitStr) { value.parse::<LitStr>()?.parse()? } else { value.parse()? };
                if place == Place::Variant {
                    errors.push(path_span, "`crate` goes on the type, not on a variant");
                } else {
                    marks.krate = Some(path);
                }
                return Ok(());
            }
            let word = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
            match Mark::from_word(&word) {
                Some(mark) => match marks.mark {
                    Some((existing, _)) => errors.push(
                        path_span,
                        format!("`{word}` conflicts with `{}` marked before it; keep one", name(existing)),
                    ),
                    None => marks.mark = Some((mark, path_span)),
                },
                None => errors.push(
                    path_span,
                    format!(
                        "unknown mark `{}`; expected {MARKS}{}",
                        quote::ToTokens::to_token_stream(&meta.path).to_string().replace(' ', ""),
                        if place == Place::Container { ", or `default = \"...\"`" } else { "" }
                    ),
                ),
            }
            Ok(())
        });
        if let Err(error) = result {
            errors.add(error);
        }
    }
    marks
}

fn set_once(slot: &mut Option<(Mark, Span)>, value: (Mark, Span), what: &str, errors: &mut Errors) {
    if slot.is_some() {
        errors.push(
            value.1,
            format!("`{what}` is given more than once; keep one"),
        );
    } else {
        *slot = Some(value);
    }
}

fn name(mark: Mark) -> &'static str {
    match mark {
        Mark::Failure => "failure",
        Mark::Healthy => "healthy",
        Mark::Ignore => "ignore",
        Mark::Transparent => "transparent",
    }
}
