async fn lookup(key: u64) -> Result<Row, DbError> {
    let _ = <Result<
        Row,
        DbError,
    > as ::breaker_runtime::__private::FromRejection>::from_rejection;
    #[::breaker_runtime::__private::linkme::distributed_slice(
        ::breaker_runtime::__private::DECLARATIONS
    )]
    #[linkme(crate = ::breaker_runtime::__private::linkme)]
    static __BREAKER_DECLARATION: ::breaker_runtime::__private::Declaration = ::breaker_runtime::__private::Declaration {
        name: ::core::option::Option::None,
        default_name: ::core::concat!(::core::module_path!(), "::", "lookup"),
        config: ::breaker_runtime::__private::Config::__checked(
            ::breaker_runtime::__private::Name::from_static(
                ::core::concat!(::core::module_path!(), "::", "lookup"),
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
            ::core::option::Option::None,
            false,
        ),
    };
    static __BREAKER_HANDLE: ::breaker_runtime::__private::Handle = ::breaker_runtime::__private::Handle::new(
        &__BREAKER_DECLARATION,
    );
    let __breaker: &'static ::breaker_runtime::Breaker = __BREAKER_HANDLE.get();
    let __breaker_outcome = {
        static __BREAKER_POLICY: ::breaker_runtime::__private::LazyLock<
            ::breaker_runtime::__private::Policy,
        > = ::breaker_runtime::__private::LazyLock::new(|| ::breaker_runtime::__private::Policy::__checked(::breaker_runtime::__private::PolicySettings {
            retries: 2u32,
            max_concurrent: ::core::option::Option::Some(8u32),
            ..::breaker_runtime::__private::PolicySettings::DEFAULT
        }));
        let mut __breaker_attempts = ::breaker_runtime::__private::Attempts::begin(
            &__BREAKER_POLICY,
            __breaker,
        );
        '__breaker_attempts: loop {
            let __breaker_slot = match __breaker_attempts.slot_now() {
                ::core::option::Option::Some(__breaker_slot) => __breaker_slot,
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
            #[allow(unused_variables, unused_mut)]
            let key = ::breaker_runtime::__private::RetryArg::duplicate(&key);
            let __breaker_attempt = ::breaker_runtime::__private::attempt(
                    __breaker,
                    async {
                        let __breaker_value = async {
                            if let ::core::option::Option::Some(__breaker_ret) = ::core::option::Option::None::<
                                Result<Row, DbError>,
                            > {
                                #[allow(unreachable_code)] return __breaker_ret;
                            }
                            let __breaker_ret: Result<Row, DbError> = {
                                db::row(key).await
                            };
                            #[allow(unreachable_code)] __breaker_ret
                        }
                            .await;
                        let __breaker_verdict = ::breaker_runtime::__private::classify::<
                            Result<Row, DbError>,
                        >(&__breaker_value);
                        let __breaker_describe = ::breaker_runtime::__private::describer::<
                            Result<Row, DbError>,
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
            match __breaker_attempts
                .retry(::breaker_runtime::__private::Attempted::of(&__breaker_attempt))
            {
                ::core::option::Option::None => {
                    break '__breaker_attempts __breaker_attempt;
                }
                ::core::option::Option::Some(__breaker_wait) => {
                    ::breaker_runtime::__private::backoff(__breaker_wait).await
                }
            }
        }
    };
    match __breaker_outcome {
        ::core::result::Result::Ok((__breaker_value, _, _)) => __breaker_value,
        ::core::result::Result::Err(__breaker_error) => {
            <Result<
                Row,
                DbError,
            > as ::breaker_runtime::__private::FromRejection>::from_rejection(
                __breaker_error,
            )
        }
    }
}
