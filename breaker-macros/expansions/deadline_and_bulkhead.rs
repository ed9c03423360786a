async fn search(query: String) -> Result<Vec<Hit>, SearchError> {
    #[::breaker_runtime::__private::linkme::distributed_slice(
        ::breaker_runtime::__private::DECLARATIONS
    )]
    #[linkme(crate = ::breaker_runtime::__private::linkme)]
    static __BREAKER_DECLARATION: ::breaker_runtime::__private::Declaration = ::breaker_runtime::__private::Declaration {
        name: ::core::option::Option::None,
        default_name: ::core::concat!(::core::module_path!(), "::", "search"),
        config: ::breaker_runtime::__private::Config::__checked(
            ::breaker_runtime::__private::Name::from_static(
                ::core::concat!(::core::module_path!(), "::", "search"),
            ),
            ::breaker_runtime::__private::Settings {
                ..::breaker_runtime::__private::Settings::DEFAULT
            },
        ),
        location: ::breaker_runtime::__private::Location {
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
        },
        fallbacks: ::breaker_runtime::__private::Fallbacks::new(
            ::core::option::Option::Some("busy"),
            false,
        ),
    };
    static __BREAKER_HANDLE: ::breaker_runtime::__private::Handle = ::breaker_runtime::__private::Handle::new(
        &__BREAKER_DECLARATION,
    );
    let __breaker: &'static ::breaker_runtime::Breaker = __BREAKER_HANDLE.get();
    let __breaker_fallback_arg0 = ::breaker_runtime::__private::FallbackArg::duplicate(
        &query,
    );
    let __breaker_outcome = {
        static __BREAKER_POLICY: ::breaker_runtime::__private::LazyLock<
            ::breaker_runtime::__private::Policy,
        > = ::breaker_runtime::__private::LazyLock::new(|| ::breaker_runtime::__private::Policy::__checked(::breaker_runtime::__private::PolicySettings {
            retries: 0u32,
            deadline: ::core::option::Option::Some(
                ::breaker_runtime::__private::Duration::from_millis(5000u64),
            ),
            max_concurrent: ::core::option::Option::Some(64u32),
            max_wait: ::core::option::Option::Some(
                ::breaker_runtime::__private::Duration::from_millis(100u64),
            ),
            ..::breaker_runtime::__private::PolicySettings::DEFAULT
        }));
        let __breaker_attempts = ::breaker_runtime::__private::Attempts::begin(
            &__BREAKER_POLICY,
            __breaker,
        );
        ::breaker_runtime::__private::within_deadline(
                &__BREAKER_POLICY,
                __breaker,
                async {
                    '__breaker_attempts: {
                        let __breaker_slot = match __breaker_attempts.slot_now() {
                            ::core::option::Option::Some(__breaker_slot) => {
                                __breaker_slot
                            }
                            ::core::option::Option::None => {
                                match __breaker_attempts.slot().await {
                                    ::core::result::Result::Ok(__breaker_slot) => __breaker_slot,
                                    ::core::result::Result::Err(__breaker_full) => {
                                        let __breaker_refused = ::core::result::Result::Err(
                                            __breaker_full,
                                        );
                                        break '__breaker_attempts __breaker_refused;
                                    }
                                }
                            }
                        };
                        let __breaker_attempt = ::breaker_runtime::__private::attempt(
                                __breaker,
                                async {
                                    let __breaker_value = async {
                                        if let ::core::option::Option::Some(__breaker_ret) = ::core::option::Option::None::<
                                            Result<Vec<Hit>, SearchError>,
                                        > {
                                            #[allow(unreachable_code)] return __breaker_ret;
                                        }
                                        let __breaker_ret: Result<Vec<Hit>, SearchError> = {
                                            index(&query).await
                                        };
                                        #[allow(unreachable_code)] __breaker_ret
                                    }
                                        .await;
                                    let __breaker_verdict = ::breaker_runtime::__private::classify::<
                                        Result<Vec<Hit>, SearchError>,
                                    >(&__breaker_value);
                                    let __breaker_describe = ::breaker_runtime::__private::describer::<
                                        Result<Vec<Hit>, SearchError>,
                                        _,
                                    >(|__breaker_failed| {
                                        use ::breaker_runtime::__private::DescribeFailure as _;
                                        (&&&&::breaker_runtime::__private::Describe(
                                            __breaker_failed,
                                        ))
                                            .failure()
                                    });
                                    (__breaker_value, __breaker_verdict, __breaker_describe)
                                },
                            )
                            .await;
                        ::core::mem::drop(__breaker_slot);
                        __breaker_attempt
                    }
                },
            )
            .await
    };
    match __breaker_outcome {
        ::core::result::Result::Ok(
            (
                __breaker_value,
                ::breaker_runtime::Verdict::Success | ::breaker_runtime::Verdict::Ignore,
                _,
            ),
        ) => __breaker_value,
        __breaker_unanswered => {
            ::core::mem::drop(__breaker_unanswered);
            {
                __BREAKER_DECLARATION.fallbacks.ran();
                let __breaker_fallback: Result<Vec<Hit>, SearchError> = busy(
                        __breaker_fallback_arg0,
                    )
                    .await;
                __breaker_fallback
            }
        }
    }
}
