//! Builds the actix application: routes, extractor configs, the JSON safety net.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::from_fn;
use actix_web::{App, web};
use tracing_actix_web::TracingLogger;
use utoipa_actix_web::AppExt;

use crate::error::{json_config, no_route, path_config};
use crate::middleware::{json_safety_net, normalize_request};
use crate::state::AppState;

/// The application with every route and middleware. `doc` is the OpenAPI document served at
/// `/v1/openapi.json` (build it once with [`openapi::document`]).
pub fn app(
    state: AppState,
    doc: web::Data<utoipa::openapi::OpenApi>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let bench_floor = state.settings.bench_floor;
    App::new()
        .into_utoipa_app()
        .configure(crate::routes::configure)
        .into_app()
        .configure(crate::routes::integrations::configure)
        .service(crate::metrics::scrape)
        .service(docs_ui())
        .route("/docs", web::get().to(docs_redirect))
        .configure(|cfg| {
            if bench_floor {
                cfg.service(crate::routes::bench::floor)
                    .service(crate::routes::bench::insert_floor);
            }
        })
        .app_data(web::Data::new(state))
        .app_data(crate::routes::registry())
        .app_data(doc)
        .app_data(json_config())
        .app_data(path_config())
        .default_service(web::to(no_route))
        .wrap(from_fn(crate::auth::enforce_policy))
        .wrap(from_fn(json_safety_net))
        .wrap(from_fn(normalize_request))
        .wrap(TracingLogger::default())
        .wrap(from_fn(crate::telemetry::access_log))
}

/// Swagger UI over the document served at `/v1/openapi.json` (not a second copy of it); its
/// assets are compiled into the binary, so the page fetches nothing from the internet.
fn docs_ui() -> utoipa_swagger_ui::SwaggerUi {
    utoipa_swagger_ui::SwaggerUi::new("/docs/{_:.*}")
        // No validator badge: it would fetch from validator.swagger.io.
        .config(utoipa_swagger_ui::Config::from("/v1/openapi.json").validator_url("none"))
}

/// `/docs` → `/docs/`: the page loads its assets by relative paths.
async fn docs_redirect() -> actix_web::HttpResponse {
    actix_web::HttpResponse::PermanentRedirect()
        .insert_header((actix_web::http::header::LOCATION, "/docs/"))
        .finish()
}
