async fn stream(topic: &str) -> impl Stream<Item = Event> {
    #[::vendored::breaker_runtime::__private::linkme::distributed_slice(
        ::vendored::breaker_runtime::__private::DECLARATIONS
    )]
    #[linkme(crate = ::vendored::breaker_runtime::__private::linkme)]
    static __BREAKER_DECLARATION: ::vendored::breaker_runtime::__private::Declaration = ::vendored::breaker_runtime::__private::Declaration {
        name: ::core::option::Option::None,
        default_name: ::core::concat!(::core::module_path!(), "::", "stream"),
        config: ::vendored::breaker_runtime::__private::Config::__checked(
            ::vendored::breaker_runtime::__private::Name::from_static(
                ::core::concat!(::core::module_path!(), "::", "stream"),
            ),
            ::vendored::breaker_runtime::__private::Settings {
                probes: 3u32,
                slow_call: ::core::option::Option::Some(
                    ::vendored::breaker_runtime::__private::Duration::from_millis(200u64),
                ),
                ..::vendored::breaker_runtime::__private::Settings::DEFAULT
            },
        ),
        location: ::vendored::breaker_runtime::__private::Location {
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
        },
        fallbacks: ::vendored::breaker_runtime::__private::Fallbacks::new(
            ::core::option::Option::None,
            false,
        ),
    };
    static __BREAKER_HANDLE: ::vendored::breaker_runtime::__private::Handle = ::vendored::breaker_runtime::__private::Handle::new(
        &__BREAKER_DECLARATION,
    );
    let __breaker: &'static ::vendored::breaker_runtime::Breaker = __BREAKER_HANDLE
        .get();
    let __breaker_outcome = ::vendored::breaker_runtime::__private::attempt(
            __breaker,
            async {
                let __breaker_value = async { subscribe(topic).await }.await;
                let __breaker_verdict = ::vendored::breaker_runtime::__private::classify(
                    &__breaker_value,
                );
                let __breaker_describe = ::vendored::breaker_runtime::__private::silent(
                    &__breaker_value,
                );
                (__breaker_value, __breaker_verdict, __breaker_describe)
            },
        )
        .await;
    match __breaker_outcome {
        ::core::result::Result::Ok((__breaker_value, _, _)) => __breaker_value,
        ::core::result::Result::Err(__breaker_error) => {
            ::vendored::breaker_runtime::__private::FromRejection::from_rejection(
                __breaker_error,
            )
        }
    }
}
