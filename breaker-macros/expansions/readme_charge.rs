async fn charge(order: &Order) -> Result<Receipt, PayError> {
    #[::breaker_runtime::__private::linkme::distributed_slice(
        ::breaker_runtime::__private::DECLARATIONS
    )]
    #[linkme(crate = ::breaker_runtime::__private::linkme)]
    static __BREAKER_DECLARATION: ::breaker_runtime::__private::Declaration = ::breaker_runtime::__private::Declaration {
        name: ::core::option::Option::None,
        default_name: ::core::concat!(::core::module_path!(), "::", "charge"),
        config: ::breaker_runtime::__private::Config::__checked(
            ::breaker_runtime::__private::Name::from_static(
                ::core::concat!(::core::module_path!(), "::", "charge"),
            ),
            ::breaker_runtime::__private::Settings {
                threshold: ::breaker_runtime::__private::Rate::from_ppm(500000u32),
                window: ::breaker_runtime::__private::Window::Count(20u32),
                timeout: ::core::option::Option::Some(
                    ::breaker_runtime::__private::Duration::from_millis(2000u64),
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
            ::core::option::Option::Some("queue_charge"),
            false,
        ),
    };
    static __BREAKER_HANDLE: ::breaker_runtime::__private::Handle = ::breaker_runtime::__private::Handle::new(
        &__BREAKER_DECLARATION,
    );
    let __breaker: &'static ::breaker_runtime::Breaker = __BREAKER_HANDLE.get();
    let __breaker_outcome = ::breaker_runtime::__private::attempt(
            __breaker,
            async {
                let __breaker_value = async {
                    if let ::core::option::Option::Some(__breaker_ret) = ::core::option::Option::None::<
                        Result<Receipt, PayError>,
                    > {
                        #[allow(unreachable_code)] return __breaker_ret;
                    }
                    let __breaker_ret: Result<Receipt, PayError> = {
                        payments.charge(order).await
                    };
                    #[allow(unreachable_code)] __breaker_ret
                }
                    .await;
                let __breaker_verdict = ::breaker_runtime::__private::classify::<
                    Result<Receipt, PayError>,
                >(&__breaker_value);
                let __breaker_describe = ::breaker_runtime::__private::describer::<
                    Result<Receipt, PayError>,
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
                let __breaker_fallback: Result<Receipt, PayError> = queue_charge(order)
                    .await;
                __breaker_fallback
            }
        }
    }
}
