async fn upload(body: impl AsRef<[u8]> + Send) -> Result<(), UploadError> {
    let _ = <Result<
        (),
        UploadError,
    > as ::breaker_runtime::__private::FromRejection>::from_rejection;
    #[::breaker_runtime::__private::linkme::distributed_slice(
        ::breaker_runtime::__private::DECLARATIONS
    )]
    #[linkme(crate = ::breaker_runtime::__private::linkme)]
    static __BREAKER_DECLARATION: ::breaker_runtime::__private::Declaration = ::breaker_runtime::__private::Declaration {
        name: ::core::option::Option::Some("uploads"),
        default_name: ::core::concat!(::core::module_path!(), "::", "upload"),
        config: ::breaker_runtime::__private::Config::__checked(
            ::breaker_runtime::__private::Name::from_static("uploads"),
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
    let __breaker_outcome = ::breaker_runtime::__private::attempt(
            __breaker,
            async {
                let __breaker_value = async {
                    if let ::core::option::Option::Some(__breaker_ret) = ::core::option::Option::None::<
                        Result<(), UploadError>,
                    > {
                        #[allow(unreachable_code)] return __breaker_ret;
                    }
                    let __breaker_ret: Result<(), UploadError> = {
                        store(body.as_ref()).await
                    };
                    #[allow(unreachable_code)] __breaker_ret
                }
                    .await;
                let __breaker_verdict = ::breaker_runtime::__private::classify::<
                    Result<(), UploadError>,
                >(&__breaker_value);
                let __breaker_describe = ::breaker_runtime::__private::describer::<
                    Result<(), UploadError>,
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
        ::core::result::Result::Ok((__breaker_value, _, _)) => __breaker_value,
        ::core::result::Result::Err(__breaker_error) => {
            <Result<
                (),
                UploadError,
            > as ::breaker_runtime::__private::FromRejection>::from_rejection(
                __breaker_error,
            )
        }
    }
}
