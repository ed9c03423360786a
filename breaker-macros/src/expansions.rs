//! The expansion of a dozen representative guarded fns, pinned: each is printed (prettyplease)
//! and compared with its file in `breaker-macros/expansions/`, so a change to the code the
//! attribute writes shows as a diff to review, and moving code inside the crate is proved to
//! change nothing. After a change meant to alter the output, write the files anew with
//! `BREAKER_BLESS=1 cargo test -p breaker-macros expansions` and read the diff.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

/// One case: its file's name, the attribute's arguments, and the item.
struct Case {
    name: &'static str,
    args: TokenStream,
    item: TokenStream,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "plain",
            args: quote!(),
            item: quote! {
                async fn lookup(id: u32) -> Result<u32, BreakerError> { Ok(id) }
            },
        },
        Case {
            name: "readme_charge",
            args: quote!(
                threshold = "50%",
                window = "20",
                timeout_ms = 2000,
                fallback = queue_charge
            ),
            item: quote! {
                async fn charge(order: &Order) -> Result<Receipt, PayError> { payments.charge(order).await }
            },
        },
        Case {
            name: "method_in_impl",
            args: quote!(),
            item: quote! {
                impl Catalog {
                    #[circuit_breaker(timeout = "1s", fallback = cached)]
                    async fn price(&self, sku: &str) -> Result<u64, CatalogError> { self.client.price(sku).await }
                    async fn cached(&self, sku: &str) -> Result<u64, CatalogError> { Ok(0) }
                }
            },
        },
        Case {
            name: "impl_trait_argument",
            args: quote!(name = "uploads"),
            item: quote! {
                async fn upload(body: impl AsRef<[u8]> + Send) -> Result<(), UploadError> { store(body.as_ref()).await }
            },
        },
        Case {
            name: "pattern_parameters",
            args: quote!(fallback = later),
            item: quote! {
                async fn add((a, b): (u32, u32), Point { x, y }: Point, mut count: u32) -> Result<u32, E> {
                    count += 1;
                    Ok(a + b + x + y + count)
                }
            },
        },
        Case {
            name: "fallback_by_value",
            args: quote!(fallback = queue, is_failure = PayError::is_outage),
            item: quote! {
                pub async fn pay(order: Order, retry: bool) -> Result<Receipt, PayError> { gateway(order, retry).await }
            },
        },
        Case {
            name: "stale_for",
            args: quote!(stale_for = "1m", stale_entries = 100, window = "30s"),
            item: quote! {
                async fn quote(sku: u32, currency: &str) -> Result<Quote, QuoteError> { prices(sku, currency).await }
            },
        },
        Case {
            name: "retries",
            args: quote!(retries = 3, backoff = "100ms..10s", retry_budget = "20%"),
            item: quote! {
                async fn fetch(url: &str) -> Result<String, FetchError> { get(url).await }
            },
        },
        Case {
            name: "deadline_and_bulkhead",
            args: quote!(
                deadline = "5s",
                max_concurrent = 64,
                max_wait = "100ms",
                fallback = busy
            ),
            item: quote! {
                async fn search(query: String) -> Result<Vec<Hit>, SearchError> { index(&query).await }
            },
        },
        Case {
            name: "bulkhead_and_retries",
            args: quote!(max_concurrent = 8, retries = 2),
            item: quote! {
                async fn lookup(key: u64) -> Result<Row, DbError> { db::row(key).await }
            },
        },
        Case {
            name: "async_trait",
            args: quote!(timeout_ms = 500),
            item: quote! {
                fn get<'life0, 'async_trait>(&'life0 self, id: u32)
                    -> ::core::pin::Pin<Box<dyn ::core::future::Future<Output = Result<User, DbError>> + ::core::marker::Send + 'async_trait>>
                where 'life0: 'async_trait, Self: 'async_trait
                {
                    Box::pin(async move {
                        let __self = self;
                        let id = id;
                        let __ret: Result<User, DbError> = { __self.db.user(id).await };
                        #[allow(unreachable_code)]
                        __ret
                    })
                }
            },
        },
        Case {
            name: "generic",
            args: quote!(window = "10s", min_calls = 5, mode = "shadow"),
            item: quote! {
                async fn decode<T: serde::de::DeserializeOwned, S>(source: &S, key: &str) -> Result<T, DecodeError>
                where S: Source + Sync
                { source.get(key).await.and_then(|raw| parse(&raw)) }
            },
        },
        Case {
            name: "opaque_return_and_crate",
            args: quote!(
                crate = ::vendored::breaker_runtime,
                slow_call = "200ms",
                probes = 3
            ),
            item: quote! {
                async fn stream(topic: &str) -> impl Stream<Item = Event> { subscribe(topic).await }
            },
        },
    ]
}

/// The expansion of a case, printed.
fn expand(case: &Case) -> String {
    let expanded = match syn::parse2::<syn::ItemFn>(case.item.clone()) {
        Ok(function) => crate::guard::guard(case.args.clone(), function, None),
        Err(_) => {
            let block: syn::ItemImpl = syn::parse2(case.item.clone())
                .unwrap_or_else(|e| panic!("{}: neither a fn nor an impl block: {e}", case.name));
            crate::impl_block::expand(case.args.clone(), block)
        }
    };
    let file: syn::File = syn::parse2(expanded)
        .unwrap_or_else(|e| panic!("{}: the expansion does not parse: {e}", case.name));
    prettyplease::unparse(&file)
}

fn pinned(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("expansions")
        .join(format!("{name}.rs"))
}

#[test]
fn every_case_expands_exactly_as_pinned() {
    let bless = std::env::var_os("BREAKER_BLESS").is_some();
    let mut differ = Vec::new();
    for case in cases() {
        let printed = expand(&case);
        let path = pinned(case.name);
        if bless {
            std::fs::write(&path, &printed).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(pinned) if pinned == printed => {}
            Ok(pinned) => {
                let line = pinned
                    .lines()
                    .zip(printed.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(pinned.lines().count().min(printed.lines().count()));
                differ.push(format!(
                    "{} (first difference at line {})",
                    case.name,
                    line + 1
                ));
            }
            Err(_) => differ.push(format!("{} (no file {})", case.name, path.display())),
        }
    }
    assert!(
        differ.is_empty(),
        "expansions that differ from breaker-macros/expansions/: {differ:?}; if the change is \
         meant, write them anew with BREAKER_BLESS=1 and review the diff"
    );
}

#[test]
fn every_pinned_file_has_its_case() {
    let names: Vec<_> = cases().iter().map(|c| format!("{}.rs", c.name)).collect();
    assert!(names.len() >= 12, "a dozen cases");
    for entry in std::fs::read_dir(pinned("x").parent().unwrap()).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        assert!(names.contains(&file), "{file} is pinned for no case");
    }
}
