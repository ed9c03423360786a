async fn quote(sku: u32, currency: &str) -> Result<Quote, QuoteError> {
    let _ = <Result<
        Quote,
        QuoteError,
    > as ::breaker_runtime::__private::FromRejection>::from_rejection;
    #[::breaker_runtime::__private::linkme::distributed_slice(
        ::breaker_runtime::__private::DECLARATIONS
    )]
    #[linkme(crate = ::breaker_runtime::__private::linkme)]
    static __BREAKER_DECLARATION: ::breaker_runtime::__private::Declaration = ::breaker_runtime::__private::Declaration {
        name: ::core::option::Option::None,
        default_name: ::core::concat!(::core::module_path!(), "::", "quote"),
        config: ::breaker_runtime::__private::Config::__checked(
            ::breaker_runtime::__private::Name::from_static(
                ::core::concat!(::core::module_path!(), "::", "quote"),
            ),
            ::breaker_runtime::__private::Settings {
                window: ::breaker_runtime::__private::Window::Time(
                    ::breaker_runtime::__private::Duration::from_millis(30000u64),
                ),
                ..::breaker_runtime::__private::Settings::DEFAULT
            },
        ),
        location: ::breaker_runtime::__private::Location {
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
        },
        fallbacks: ::breaker_runtime::__private::Fallbacks::new(
            ::core::option::Option::None,
            true,
        ),
    };
    static __BREAKER_HANDLE: ::breaker_runtime::__private::Handle = ::breaker_runtime::__private::Handle::new(
        &__BREAKER_DECLARATION,
    );
    static __BREAKER_STALE: ::breaker_runtime::__private::LazyLock<
        ::breaker_runtime::__private::StaleCache<
            (u32, <str as ::std::borrow::ToOwned>::Owned),
            Result<Quote, QuoteError>,
        >,
    > = ::breaker_runtime::__private::LazyLock::new(|| ::breaker_runtime::__private::StaleCache::new(
        ::breaker_runtime::__private::Duration::from_millis(60000u64),
        100usize,
    ));
    let __breaker: &'static ::breaker_runtime::Breaker = __BREAKER_HANDLE.get();
    ::breaker_runtime::__private::stale_key_part::<u32>();
    ::breaker_runtime::__private::stale_key_part::<
        <str as ::std::borrow::ToOwned>::Owned,
    >();
    let __breaker_key = (
        ::core::clone::Clone::clone(&sku),
        ::std::borrow::ToOwned::to_owned(&*currency),
    );
    let __breaker_outcome = ::breaker_runtime::__private::attempt(
            __breaker,
            async {
                let __breaker_value = async {
                    if let ::core::option::Option::Some(__breaker_ret) = ::core::option::Option::None::<
                        Result<Quote, QuoteError>,
                    > {
                        #[allow(unreachable_code)] return __breaker_ret;
                    }
                    let __breaker_ret: Result<Quote, QuoteError> = {
                        prices(sku, currency).await
                    };
                    #[allow(unreachable_code)] __breaker_ret
                }
                    .await;
                let __breaker_verdict = ::breaker_runtime::__private::classify::<
                    Result<Quote, QuoteError>,
                >(&__breaker_value);
                let __breaker_describe = ::breaker_runtime::__private::describer::<
                    Result<Quote, QuoteError>,
                    _,
                >(|__breaker_failed| {
                    use ::breaker_runtime::__private::DescribeFailure as _;
                    (&&&&::breaker_runtime::__private::Describe(__breaker_failed))
                        .failure()
                });
                (__breaker_value, __breaker_verdict, __breaker_describe)
            },
        )
        .await;
    match __breaker_outcome {
        ::core::result::Result::Ok(
            (__breaker_value, ::breaker_runtime::Verdict::Success, _),
        ) => {
            let __breaker_keepable = {
                use ::breaker_runtime::__private::IsKeepable as _;
                (&&::breaker_runtime::__private::Keepable(&__breaker_value)).keepable()
            };
            if __breaker_keepable {
                <Result<
                    Quote,
                    QuoteError,
                > as ::breaker_runtime::__private::StaleAnswer>::cache(&*__BREAKER_STALE)
                    .keep(__breaker_key, &__breaker_value);
            }
            __breaker_value
        }
        ::core::result::Result::Ok(
            (__breaker_value, ::breaker_runtime::Verdict::Ignore, _),
        ) => __breaker_value,
        ::core::result::Result::Ok(
            (__breaker_value, ::breaker_runtime::Verdict::Failure, _),
        ) => {
            if let ::core::option::Option::Some(__breaker_stale) = <Result<
                Quote,
                QuoteError,
            > as ::breaker_runtime::__private::StaleAnswer>::cache(&*__BREAKER_STALE)
                .stale(&__breaker_key)
            {
                __BREAKER_DECLARATION.fallbacks.served_stale();
                return __breaker_stale;
            }
            __breaker_value
        }
        ::core::result::Result::Err(__breaker_error) => {
            if let ::core::option::Option::Some(__breaker_stale) = <Result<
                Quote,
                QuoteError,
            > as ::breaker_runtime::__private::StaleAnswer>::cache(&*__BREAKER_STALE)
                .stale(&__breaker_key)
            {
                __BREAKER_DECLARATION.fallbacks.served_stale();
                return __breaker_stale;
            }
            <Result<
                Quote,
                QuoteError,
            > as ::breaker_runtime::__private::FromRejection>::from_rejection(
                __breaker_error,
            )
        }
    }
}
