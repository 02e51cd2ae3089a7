//! What every Plan door shares beyond its policy: bodies ([`PlanJson`]: agent attribution
//! taken out, then the body checked against its schema), dry runs ([`DryRun`] and the answer
//! of one, [`preview`]), the actor of a write ([`PlanCaller::acting`]).
//!
//! Idempotency keys are applied from the route's policy (`Policy::idempotent`), not here: a
//! handler of an [IK] door does nothing for them.

use actix_web::{FromRequest, HttpRequest, HttpResponse, dev::Payload};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use teamcomm_kernel::Error;
use teamcomm_plan::{AgentName, PlanActor, Preview, Restore};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, Object, ObjectBuilder, OneOfBuilder, Schema};
use utoipa::openapi::schema::{SchemaFormat, SchemaType, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::auth::PlanCaller;
use crate::error::ApiError;
use crate::extract::text::TRIMMED;
use crate::extract::{BoxFut, decode_body, read_json};

// ---------------------------------------------------------------------------------------------
// What the parsers of the Plan's texts accept, stated as schemas (used by their fields' type or
// `schema_with`): the rule stays with its parser; the pattern says the same.

/// A list's `search` as the query gives it (the rule: [`list_search_schema`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct ListSearch(pub String);

impl PartialSchema for ListSearch {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(list_search_schema()))
    }
}

impl ToSchema for ListSearch {}

/// `q` of `GET search/` as the query gives it, with the rule of `Plan::search_tasks` stated:
/// once trimmed, 2 to 256 characters (`search_query_too_short`, `search_query_too_long`).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct SearchText(pub String);

impl std::ops::Deref for SearchText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialSchema for SearchText {
    fn schema() -> RefOr<Schema> {
        let ws = TRIMMED;
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(format!(
                    r"^[{ws}]*[^{ws}][\s\S]{{0,254}}[^{ws}][{ws}]*$"
                )))
                .build(),
        ))
    }
}

impl ToSchema for SearchText {}

/// A project door's `include` as the query gives it (the rule: [`project_include_schema`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct IncludeList(pub String);

impl PartialSchema for IncludeList {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(project_include_schema()))
    }
}

impl ToSchema for IncludeList {}

/// `search` of the project, board and grouped task lists, as
/// `teamcomm_plan::projects::check_search` takes it: once trimmed, 2 to 256 characters
/// (`search_query_too_short`, `search_query_too_long`), no NUL (`invalid_filter_value`).
pub fn list_search_schema() -> Object {
    let (ws, nul) = (TRIMMED, r"\u0000");
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(
            "^[{ws}]*[^{ws}{nul}][^{nul}]{{0,254}}[^{ws}{nul}][{ws}]*$"
        )))
        .build()
}

/// `include` of the project doors (`projects::includes`): a comma list of `progress`.
pub fn project_include_schema() -> Object {
    let ws = TRIMMED;
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(
            "^[{ws}]*(progress)?[{ws}]*(,[{ws}]*(progress)?[{ws}]*)*$"
        )))
        .examples(["progress"])
        .build()
}

/// The forms `Uuid::parse_str` reads (simple, hyphenated, braced, URN), as a pattern's
/// alternatives.
fn uuid_forms() -> String {
    let hex = "[0-9A-Fa-f]";
    let uuid = format!("{hex}{{8}}-{hex}{{4}}-{hex}{{4}}-{hex}{{4}}-{hex}{{12}}");
    format!(r"{hex}{{32}}|{uuid}|\{{{uuid}\}}|urn:uuid:{uuid}")
}

/// A task as a body names a neighbour (`teamcomm_plan::TaskRef::try_parse`): a uuid in any
/// form the uuid parser reads, or `KEY-n` (letters or digits, either case; n from 1); or null.
pub fn task_ref_schema() -> Object {
    let key = r"[A-Za-z0-9]+-\+?0*[1-9][0-9]{0,18}";
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .pattern(Some(format!("^({}|{key})$", uuid_forms())))
        .examples(["ENG-42"])
        .build()
}

/// A board as a task filter names it (`teamcomm_plan::BoardRef::parse`, each value of the
/// list trimmed): a uuid in any form the uuid parser reads, or a key (letters or digits, either
/// case; current or retired).
pub fn board_ref_schema() -> Object {
    let ws = TRIMMED;
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!(
            "^[{ws}]*({}|[A-Za-z0-9]+)[{ws}]*$",
            uuid_forms()
        )))
        .examples(["ENG"])
        .build()
}

/// A person as a task body names one (`teamcomm_plan::tasks::PersonRef::parse`): a uuid or
/// `me`, or null (none, or clear).
pub fn person_schema() -> Schema {
    let one_of = OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid))),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["me"])),
        )
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .description(Some("A person's uuid or `me`; null for none."))
        .build();
    Schema::OneOf(one_of)
}

/// A Plan JSON body: `agent_name` (agent attribution) taken out and checked, the rest decoded
/// into `T` against its documented schema. An absent body reads as `{}`, so bodies whose fields
/// are all optional need no second type.
#[derive(Debug)]
pub struct PlanJson<T> {
    pub body: T,
    pub agent_name: Option<AgentName>,
}

impl<T: DeserializeOwned + ToSchema + 'static> FromRequest for PlanJson<T> {
    type Error = actix_web::Error;
    type Future = BoxFut<Self>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = read_json(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let mut value = match json.await? {
                Value::Null => Value::Object(Default::default()),
                v => v,
            };
            let agent_name = match value.as_object_mut().and_then(|m| m.remove("agent_name")) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(AgentName::parse(&s).map_err(ApiError)?),
                Some(_) => {
                    return Err(ApiError(
                        AgentName::parse("<not a string>").expect_err("not a name"),
                    )
                    .into());
                }
            };
            if let Some(name) = agent_name.clone() {
                let caller = PlanCaller::from_request(&req, &mut Payload::None).into_inner()?;
                named_agent(&caller.0, name).map_err(ApiError)?;
            }
            let body = decode_body::<T>(value).map_err(ApiError)?;
            Ok(PlanJson { body, agent_name })
        })
    }
}

/// `?dry_run=true`: preview instead of writing.
#[derive(Debug, Clone, Copy, Default)]
pub struct DryRun(pub bool);

impl FromRequest for DryRun {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(dry_run_of(req.query_string()).map(DryRun).map_err(ApiError))
    }
}

/// Whether a query string asks for a dry run (`dry_run=true|1`; `false|0` or absent: no).
pub fn dry_run_of(query: &str) -> Result<bool, Error> {
    /// Read by the one query deserializer: percent-decoded, blank is absent, a flag as
    /// everywhere (`true`/`false`, `1`/`0`), a bad value `invalid_filter_value` naming it.
    #[derive(serde::Deserialize)]
    struct DryRunParam {
        dry_run: Option<bool>,
    }
    let found: DryRunParam = crate::extract::query_de::from_query_string(query)?;
    Ok(found.dry_run.unwrap_or(false))
}

/// A dry run's answer as every previewing door writes it.
#[derive(Debug, Serialize, ToSchema)]
pub struct PreviewBody {
    /// Always true.
    dry_run: bool,
    operation: String,
    consequence: String,
    #[schema(value_type = Object)]
    affects: Map<String, Value>,
    reversible: bool,
    /// The call that undoes the write, when reversible.
    #[serde(skip_serializing_if = "Option::is_none")]
    restore_path: Option<String>,
}

/// The answer of a door that previews on a dry run: what it writes, or the preview. Documents
/// only (the handler answers one or the other).
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum OrPreview<T: ToSchema> {
    Done(T),
    Preview(PreviewBody),
}

/// 200 with the dry run's preview (`teamcomm_plan::Preview`).
pub fn preview(p: Preview) -> HttpResponse {
    HttpResponse::Ok().json(PreviewBody {
        dry_run: true,
        reversible: p.reversible(),
        restore_path: p.restore.as_ref().map(restore_path),
        operation: p.operation,
        consequence: p.consequence,
        affects: p.affects,
    })
}

/// The restore door of what a preview says can be restored.
fn restore_path(what: &Restore) -> String {
    match what {
        Restore::Project(id) => format!("/v1/plan/projects/{id}/restore/"),
        Restore::Board(id) => format!("/v1/plan/boards/{id}/restore/"),
        Restore::State { board, state } => {
            format!("/v1/plan/boards/{board}/states/{state}/restore/")
        }
        Restore::Task(key) => format!("/v1/plan/tasks/{key}/restore/"),
    }
}

/// An agent named on a request (`agent_name` or its headers) by `actor`: a person's credential
/// may name the agent acting for them; an organization or agent key acts as no person and
/// names no agent (400 `invalid_agent_attribution`; a registered agent's key is its agent).
pub fn named_agent(actor: &PlanActor, name: AgentName) -> Result<AgentName, Error> {
    if actor.person.is_none() {
        return Err(Error::new(
            teamcomm_kernel::ErrorCode::InvalidAgentAttribution,
            "Only a person's credential names the agent acting for them; this key acts as no person.",
        )
        .with_extra("parameter", "agent_name"));
    }
    Ok(name)
}

impl PlanCaller {
    /// The actor of a write, with the agent its body names (a body's name wins over the
    /// header's, both checked by [`named_agent`]).
    pub fn acting(self, agent_name: Option<AgentName>) -> PlanActor {
        let mut actor = self.0;
        if agent_name.is_some() {
            actor.agent_name = agent_name;
        }
        actor
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamcomm_plan::TaskRef;
    use teamcomm_plan::projects::check_search;
    use teamcomm_plan::tasks::PersonRef;

    fn pattern_of(schema: impl Serialize) -> regex::Regex {
        let json = serde_json::to_value(schema).unwrap();
        regex::Regex::new(json["pattern"].as_str().expect("a pattern")).unwrap()
    }

    /// Text a fuzzer reaches for: white space of every kind, NUL, case, lengths at the edges.
    fn samples() -> Vec<String> {
        let mut all: Vec<String> = [
            "",
            " ",
            "a",
            "ab",
            " ab ",
            "a b",
            "\u{3000}ab\u{85}",
            "\u{feff}ab",
            "a\u{0}b",
            "\u{0}",
            " a ",
            "\ta\n",
            "ÉQ",
            "😀😀",
            "progress",
            " progress , progress ",
            "progress,",
            ",progress",
            "Progress",
            "progress;",
            ",",
            " , ",
            "me",
            "Me",
            " me",
            "ENG-1",
            "eng-42",
            "ENG-0",
            "ENG-01",
            "ENG-+7",
            "ENG--1",
            "E-N-1",
            "-1",
            "ENG-",
            "ENG-1 ",
            "ÉNG-1",
            "ENG",
            "eng",
            " eng ",
            "1AB",
            "A",
            "AB-C",
            "ABCDEFGHIJ",
            "ABCDEFGHIJK",
            " ABCDEFGHI ",
            "A1",
            "a\u{a0}",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        let id = "0190d1f4-7e5b-7c3e-9a5e-0a1b2c3d4e5f";
        all.extend([
            id.to_owned(),
            id.to_uppercase(),
            id.replace('-', ""),
            format!("{{{id}}}"),
            format!("urn:uuid:{id}"),
            format!(" {id}"),
            id[1..].to_owned(),
        ]);
        for n in [255, 256, 257] {
            all.push("x".repeat(n));
            all.push(format!(" {} ", "x".repeat(n)));
        }
        all
    }

    #[test]
    fn the_list_search_pattern_is_check_search() {
        let re = pattern_of(list_search_schema());
        for s in samples() {
            // A blank value is no value (the query reader's rule), so it never reaches the check.
            if s.trim().is_empty() {
                continue;
            }
            assert_eq!(re.is_match(&s), check_search(Some(&s)).is_ok(), "{s:?}");
        }
    }

    #[test]
    fn the_search_text_pattern_is_search_tasks_rule() {
        let re = pattern_of(SearchText::schema());
        for s in samples() {
            if s.trim().is_empty() {
                continue;
            }
            // `Plan::search_tasks`: the trimmed text, 2 to 256 characters.
            let n = s.trim().chars().count();
            assert_eq!(re.is_match(&s), (2..=256).contains(&n), "{s:?}");
        }
    }

    #[test]
    fn the_include_pattern_is_the_include_parser() {
        let re = pattern_of(project_include_schema());
        for s in samples() {
            let parsed = crate::routes::plan::projects::includes(Some(&s));
            assert_eq!(re.is_match(&s), parsed.is_ok(), "{s:?}");
        }
    }

    #[test]
    fn the_task_ref_pattern_is_try_parse() {
        let re = pattern_of(task_ref_schema());
        for s in samples() {
            assert_eq!(re.is_match(&s), TaskRef::try_parse(&s).is_some(), "{s:?}");
        }
    }

    #[test]
    fn the_board_ref_pattern_is_board_ref_parse() {
        let re = pattern_of(board_ref_schema());
        for s in samples() {
            // The query reader trims each value of a list and leaves out blank ones.
            if s.trim().is_empty() || s.contains(',') {
                continue;
            }
            let parsed = teamcomm_plan::BoardRef::parse(s.trim());
            assert_eq!(re.is_match(&s), parsed.is_ok(), "{s:?}");
        }
    }

    #[test]
    fn the_person_schema_is_person_ref_parse() {
        let json = serde_json::to_value(person_schema()).unwrap();
        let branches = json["oneOf"].as_array().expect("oneOf");
        assert_eq!(branches[0]["format"], "uuid");
        assert_eq!(branches[1]["enum"], serde_json::json!(["me"]));
        assert_eq!(branches[2]["type"], "null");
        for s in samples() {
            let fits = s == "me" || uuid::Uuid::parse_str(&s).is_ok();
            assert_eq!(fits, PersonRef::parse("owner", &s).is_ok(), "{s:?}");
        }
    }

    #[test]
    fn the_document_states_the_plan_body_rules() {
        let doc = serde_json::to_value(crate::openapi::document()).unwrap();
        let schemas = &doc["components"]["schemas"];
        // The field's own schema, an `Option`'s non-null branch, or a described field's `allOf`.
        let field = |body: &str, name: &str| {
            let s = &schemas[body]["properties"][name];
            let inner = s["oneOf"][0].clone();
            let inner = if inner.is_null() {
                s["allOf"][0].clone()
            } else {
                inner
            };
            if inner.is_null() { s.clone() } else { inner }
        };
        let names = |v: serde_json::Value| -> Vec<String> {
            v["enum"]
                .as_array()
                .unwrap_or_else(|| panic!("an enum in {v}"))
                .iter()
                .map(|n| n.as_str().unwrap().to_owned())
                .collect()
        };
        for body in ["CreateProjectBody", "UpdateProjectBody"] {
            assert_eq!(
                names(field(body, "health")),
                ["not_set", "on_track", "at_risk", "off_track"]
            );
            assert_eq!(names(field(body, "visibility")), ["org", "members"]);
        }
        assert_eq!(
            names(field("UpdateBoardBody", "estimate_scale")),
            ["none", "fibonacci", "linear"]
        );
        assert_eq!(
            names(field("UpdateBoardBody", "visibility")),
            ["org", "members"]
        );
        assert_eq!(
            names(field("CreateStateBody", "category")),
            ["backlog", "todo", "in_progress", "done", "canceled"]
        );
        let key = crate::routes::plan::boards::board_key_pattern();
        for body in ["CreateBoardBody", "UpdateBoardBody"] {
            assert_eq!(field(body, "key")["pattern"], key.as_str(), "{body}");
        }
        for body in ["PlanLabelBody", "PlanLabelPatch"] {
            assert_eq!(field(body, "name")["minLength"], 1, "{body}");
            assert!(field(body, "name")["pattern"].is_string(), "{body}");
        }
        for (body, name) in [
            ("CreateTaskBody", "owner"),
            ("UpdateTaskBody", "owner"),
            ("MoveTaskBody", "before"),
            ("MoveTaskBody", "after"),
        ] {
            assert!(
                schemas[body]["properties"][name]["oneOf"].is_array()
                    || schemas[body]["properties"][name]["pattern"].is_string(),
                "{body}.{name}"
            );
        }
        for (body, name) in [
            ("UpdateTaskBody", "milestone"),
            ("ReorderProjectBody", "before"),
            ("ReorderProjectBody", "after"),
            ("ReorderBoardBody", "before"),
            ("ReorderBoardBody", "after"),
        ] {
            assert_eq!(
                schemas[body]["properties"][name]["format"], "uuid",
                "{body}.{name}"
            );
        }
        for (path, name) in [
            ("/v1/plan/projects/", "include"),
            ("/v1/plan/projects/", "search"),
            ("/v1/plan/projects/{project}/", "include"),
            ("/v1/plan/boards/", "search"),
            ("/v1/plan/tasks/board/", "search"),
        ] {
            let params = doc["paths"][path]["get"]["parameters"].as_array().unwrap();
            let p = params.iter().find(|p| p["name"] == name).expect(name);
            assert!(
                p["schema"]["anyOf"][0]["pattern"].is_string(),
                "{path} {name}"
            );
            assert!(p["description"].is_string(), "{path} {name}");
        }
        let params = doc["paths"]["/v1/plan/search/"]["get"]["parameters"]
            .as_array()
            .unwrap();
        let q = params.iter().find(|p| p["name"] == "q").expect("q");
        assert_eq!(q["required"], true, "{q}");
        assert!(q["description"].is_string(), "{q}");
        assert!(q["schema"]["pattern"].is_string(), "{q}");
    }
}
