//! `/v1/forms/`: creating forms (questions, settings, permissions, workflow, command), their
//! configuration, archive, questions, the list with every filter and order, the owners picker;
//! every answer checked against what is stored. Responses are in `form_responses.rs`.

use serde_json::{Value, json};
use teamcomm_tests::{Resp, TestApp};

/// An organization with an admin, three members and a guest (each with an API key), a
/// registered report channel, and another organization with its admin.
pub(crate) struct World {
    pub app: TestApp,
    pub org: String,
    pub admin: String,
    pub admin_key: String,
    pub ada: String,
    pub ada_key: String,
    pub bob: String,
    pub bob_key: String,
    pub cy: String,
    pub cy_key: String,
    pub guest: String,
    pub guest_key: String,
    pub outsider_key: String,
}

/// Adds a person to `org`; returns their uuid.
pub(crate) async fn person(
    app: &TestApp,
    org: &str,
    first: &str,
    last: &str,
    role: &str,
) -> String {
    let email = format!("{}@example.com", uuid::Uuid::new_v4().simple());
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/users/"),
            Some(json!({"email": email, "first_name": first, "last_name": last, "role": role})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["uuid"].as_str().unwrap().to_owned()
}

async fn key_of(app: &TestApp, session: &str, user: &str) -> String {
    app.create_key(session, json!({"name": "k", "for_user_id": user}))
        .await
        .1
}

pub(crate) async fn world() -> World {
    let app = TestApp::spawn().await;
    let org = app.create_org("business").await;
    let admin = person(&app, &org, "Adele", "Admin", "admin").await;
    let session = app.session(&admin).await;
    let ada = person(&app, &org, "Ada", "Lovelace", "member").await;
    let bob = person(&app, &org, "Bob", "Stone", "member").await;
    let cy = person(&app, &org, "Cy", "Young", "member").await;
    let guest = person(&app, &org, "Gus", "Guest", "guest").await;
    let other = app.create_org("business").await;
    let outsider = person(&app, &other, "Otto", "Other", "admin").await;
    let outsider_session = app.session(&outsider).await;
    let r = app
        .operator(
            "POST",
            &format!("/operator/v1/organizations/{org}/channels/"),
            Some(json!({"id": "C1", "name": "general", "type": "channel", "platform": "slack"})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    World {
        admin_key: key_of(&app, &session, &admin).await,
        ada_key: key_of(&app, &session, &ada).await,
        bob_key: key_of(&app, &session, &bob).await,
        cy_key: key_of(&app, &session, &cy).await,
        guest_key: key_of(&app, &session, &guest).await,
        outsider_key: key_of(&app, &outsider_session, &outsider).await,
        app,
        org,
        admin,
        ada,
        bob,
        cy,
        guest,
    }
}

impl World {
    pub async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> Resp {
        self.app
            .send(method, path, &[("X-API-KEY", key)], body)
            .await
    }

    /// Creates a form by the owner of `key` with `extra` settings; returns it.
    pub async fn form(&self, key: &str, name: &str, extra: Value) -> Value {
        let mut body = json!({
            "name": name,
            "questions": [
                {"question": "What shipped?", "short_question": "Shipped"},
                {"question": "Anything else?", "short_question": "Else", "required": false},
            ],
        });
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let r = self
            .call(key, "POST", "/v1/forms/create/", Some(body))
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body
    }

    /// The form as the admin reads it.
    pub async fn stored(&self, uuid: &str) -> Value {
        let r = self
            .call(&self.admin_key, "GET", &format!("/v1/forms/{uuid}/"), None)
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body
    }

    /// The names of `GET /v1/forms/?<query>` as `key` lists them (every page).
    pub async fn names(&self, key: &str, query: &str) -> Vec<String> {
        let r = self
            .call(
                key,
                "GET",
                &format!("/v1/forms/?page_size=100&{query}"),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{query}: {}", r.text);
        r.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

pub(crate) fn uuid_of(v: &Value) -> String {
    v["uuid"].as_str().expect("uuid").to_owned()
}

#[actix_web::test]
async fn a_form_is_created_with_its_questions_settings_and_workflow() {
    let w = world().await;
    let body = json!({
        "name": "  Release train ",
        "questions": [
            {"question": "What shipped?", "question_type": "text"},
            {"question": "Ship it?", "question_type": "boolean", "short_question": "Ship"},
        ],
        "generate_short_question": true,
        "report_channels": ["C1"],
        "is_anonymous": false,
        "allow_public_responses": true,
        "require_email_and_name": true,
        "brand_with_logo": true,
        "allow_reopen_from_final_state": true,
        "workflow": {"enabled": true, "states": [
            {"label": "Draft", "color": "#CCC"},
            {"label": "In QA", "color": "#3498db"},
            {"label": "Done", "color": "#2ecc71"},
        ]},
        "who_can_edit": {"mode": "restricted", "user_uuids": [w.bob], "team_uuids": []},
        "who_can_see_responses": {"mode": "everyone"},
        "command": "Release",
    });
    let r = w
        .call(&w.ada_key, "POST", "/v1/forms/create/", Some(body))
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let f = &r.body;
    let uuid = uuid_of(f);
    assert_eq!(f["id"], f["uuid"]);
    assert_eq!(f["name"], "Release train");
    assert_eq!(
        f["owner"],
        json!({"uuid": w.ada, "full_name": "Ada Lovelace"})
    );
    assert_eq!(
        f["public_url"],
        format!("https://app.teamcomm.test/forms/{uuid}/")
    );
    assert_eq!(
        (f["is_active"].clone(), f["is_archived"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(f["allow_public_responses"], true);
    assert_eq!(f["command"], "release");
    assert_eq!(f["command_enabled"], true);
    let states = json!([
        {"key": "draft", "label": "Draft", "color": "#ccc", "order": 0, "is_final": false},
        {"key": "in_qa", "label": "In QA", "color": "#3498db", "order": 1, "is_final": false},
        {"key": "done", "label": "Done", "color": "#2ecc71", "order": 2, "is_final": true},
    ]);
    assert_eq!(f["workflow"], json!({"enabled": true, "states": states}));
    assert_eq!(f["workflow_config"]["states"], states);
    assert_eq!(f["workflow_enabled"], true);
    assert_eq!(
        f["who_can_edit"],
        json!({"mode": "restricted", "user_uuids": [w.bob], "team_uuids": []})
    );
    assert_eq!(f["who_can_see_responses"]["mode"], "everyone");
    assert_eq!(f["who_can_change_states"]["mode"], "owner_and_admins");
    assert_eq!(f["approvers"], json!({"user_uuids": [], "team_uuids": []}));
    assert_eq!(
        f["report_channels"],
        json!([{"id": "C1", "name": "general", "platform": "slack", "type": "channel", "reporting_enabled": true}])
    );
    let q = f["questions"].as_array().unwrap();
    assert_eq!(q.len(), 2);
    assert_eq!(
        (
            q[0]["index"].clone(),
            q[0]["short_question"].clone(),
            q[1]["question_type"].clone()
        ),
        (json!(0), json!("Shipped"), json!("boolean"))
    );
    assert_eq!(f["questions_version"], 1);
    assert_eq!(f["response_count"], 0);
    assert_eq!(
        f["permissions"],
        json!({"can_edit": true, "can_see_responses": true, "can_change_states": true})
    );
    // Stored as answered; another member reads it with their own permissions.
    let mut read = w.stored(&uuid).await;
    assert_eq!(read, *f);
    let r = w
        .call(&w.cy_key, "GET", &format!("/v1/forms/{uuid}/"), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["permissions"]["can_edit"], false);
    assert_eq!(
        r.body["permissions"]["can_see_responses"], true,
        "everyone sees"
    );
    read["permissions"] = r.body["permissions"].clone();
    assert_eq!(r.body, read);
    // Another organization sees nothing; a path that is no uuid is no form.
    w.call(&w.outsider_key, "GET", &format!("/v1/forms/{uuid}/"), None)
        .await
        .assert_error(404, "not_found");
    w.call(&w.ada_key, "GET", "/v1/forms/not-a-uuid/", None)
        .await
        .assert_error(404, "not_found");
}

#[actix_web::test]
async fn creation_refusals_name_their_code_and_store_nothing() {
    let w = world().await;
    let q = json!([{"question": "Q?", "short_question": "Q"}]);
    let create =
        async |key: &str, body: Value| w.call(key, "POST", "/v1/forms/create/", Some(body)).await;
    create(&w.guest_key, json!({"name": "Retro", "questions": q}))
        .await
        .assert_error(403, "guest_not_allowed");
    create(&w.ada_key, json!({"name": "Retro"}))
        .await
        .assert_error(400, "questions_required");
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": [{"question": "Q?"}]}),
    )
    .await;
    r.assert_error(400, "short_question_required");
    assert!(
        r.body["errors"]["questions[0].short_question"].is_array(),
        "{}",
        r.text
    );
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "colour": "red"}),
    )
    .await;
    r.assert_error(400, "unknown_field");
    assert_eq!(r.body["extra"]["parameter"], "colour");
    let r = create(&w.ada_key, json!({"questions": q})).await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["name"].is_array());
    let r = create(&w.ada_key, json!({"name": "ab", "questions": q})).await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["name"].is_array());
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "report_channels": ["C1", "C404"]}),
    )
    .await;
    r.assert_error(400, "report_channel_not_found");
    assert_eq!(r.body["extra"]["ids"], json!(["C404"]));
    create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "report_channels": ["a", "b", "c", "d"]}),
    )
    .await
    .assert_error(400, "too_many_report_channels");
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "workflow": {"enabled": true, "states": [
            {"label": "A", "color": "#000"}, {"label": "B", "color": "blue"}]}}),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    assert!(
        r.body["errors"]["workflow.states.1.color"].is_array(),
        "{}",
        r.text
    );
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "workflow": {"enabled": true, "states": [
            {"label": "Same", "color": "#000"}, {"label": "same", "color": "#111"}]}}),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    assert!(
        r.body["errors"]["workflow.states[1].label"].is_array(),
        "{}",
        r.text
    );
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "workflow": {"enabled": true}}),
    )
    .await;
    assert!(r.body["errors"]["workflow.states"].is_array(), "{}", r.text);
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "who_can_edit": {"mode": "restricted"},
               "approvers": {"user_uuids": [uuid::Uuid::new_v4()]}}),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["who_can_edit"].is_array(), "{}", r.text);
    assert!(
        r.body["errors"]["approvers.user_uuids"].is_array(),
        "{}",
        r.text
    );
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "who_can_edit": {"mode": "nobody"}}),
    )
    .await;
    r.assert_error(400, "params_validation_error");
    assert!(
        r.body["errors"]["who_can_edit.mode"].is_array(),
        "{}",
        r.text
    );
    let r = create(
        &w.ada_key,
        json!({"name": "Retro", "questions": q, "command": "Not ok"}),
    )
    .await;
    assert!(r.body["errors"]["command"].is_array(), "{}", r.text);
    assert_eq!(
        w.names(&w.admin_key, "include_archived=true").await,
        Vec::<String>::new()
    );
    // A command enabled on a live form is taken.
    w.form(&w.ada_key, "Deploys", json!({"command": "deploy"}))
        .await;
    create(
        &w.bob_key,
        json!({"name": "Hotfix", "questions": q, "command": "deploy"}),
    )
    .await
    .assert_error(409, "form_command_taken");
    assert_eq!(w.names(&w.admin_key, "").await, ["Deploys"]);
}

#[actix_web::test]
async fn config_changes_what_is_sent_for_editors_only() {
    let w = world().await;
    let f = w
        .form(
            &w.ada_key,
            "Retro",
            json!({"who_can_edit": {"mode": "restricted", "user_uuids": [w.bob]}}),
        )
        .await;
    let uuid = uuid_of(&f);
    let path = format!("/v1/forms/{uuid}/config/");
    w.call(&w.cy_key, "PATCH", &path, Some(json!({"name": "Mine"})))
        .await
        .assert_error(403, "form_edit_forbidden");
    w.call(
        &w.outsider_key,
        "PATCH",
        &path,
        Some(json!({"name": "Theirs"})),
    )
    .await
    .assert_error(404, "not_found");
    w.call(&w.bob_key, "PATCH", &path, Some(json!({"questions": []})))
        .await
        .assert_error(400, "unknown_field");
    let r = w
        .call(
            &w.bob_key,
            "PATCH",
            &path,
            Some(
                json!({"name": "Retro 2", "is_anonymous": true, "use_for_approval": true,
                        "approvers": {"user_uuids": [w.cy], "team_uuids": []}}),
            ),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["name"], "Retro 2");
    assert_eq!(r.body["is_anonymous"], true);
    assert_eq!(r.body["who_can_edit"], f["who_can_edit"], "untouched");
    let keys: Vec<&str> = r.body["workflow"]["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["pending", "approved", "denied"],
        "an approval form gets the approval workflow"
    );
    assert_eq!(r.body["approvers"]["user_uuids"], json!([w.cy]));
    let stored = w.stored(&uuid).await;
    assert_eq!(stored["name"], "Retro 2");
    assert_eq!(stored["updated_at"], r.body["updated_at"]);
    // The command: set, disabled, removed with null.
    let r = w
        .call(
            &w.ada_key,
            "PATCH",
            &path,
            Some(json!({"command": "retro"})),
        )
        .await;
    assert_eq!(
        (r.body["command"].clone(), r.body["command_enabled"].clone()),
        (json!("retro"), json!(true))
    );
    let r = w
        .call(
            &w.ada_key,
            "PATCH",
            &path,
            Some(json!({"command_enabled": false})),
        )
        .await;
    assert_eq!(
        (r.body["command"].clone(), r.body["command_enabled"].clone()),
        (json!("retro"), json!(false))
    );
    let r = w
        .call(&w.ada_key, "PATCH", &path, Some(json!({"command": null})))
        .await;
    assert_eq!(r.body["command"], Value::Null);
    let r = w
        .call(
            &w.ada_key,
            "PATCH",
            &path,
            Some(json!({"command_enabled": true})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(r.body["errors"]["command_enabled"].is_array());
    let r = w
        .call(
            &w.ada_key,
            "PATCH",
            &path,
            Some(json!({"workflow": {"enabled": false}})),
        )
        .await;
    r.assert_error(400, "params_validation_error");
    assert!(
        r.body["errors"]["workflow"].is_array(),
        "approval keeps its workflow"
    );
}

#[actix_web::test]
async fn a_removed_state_that_holds_responses_is_refused() {
    let w = world().await;
    let states = |labels: &[&str]| json!({"workflow": {"enabled": true, "states": labels.iter().map(|l| json!({"label": l, "color": "#000"})).collect::<Vec<_>>()}});
    let f = w
        .form(&w.ada_key, "Release", states(&["Draft", "QA", "Done"]))
        .await;
    let uuid = uuid_of(&f);
    let q = f["questions"][0]["uuid"].as_str().unwrap().to_owned();
    let r = w
        .call(
            &w.bob_key,
            "POST",
            &format!("/v1/forms/{uuid}/responses/"),
            Some(json!({"content": {q: "x"}})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let path = format!("/v1/forms/{uuid}/config/");
    let r = w
        .call(&w.ada_key, "PATCH", &path, Some(states(&["QA", "Done"])))
        .await;
    r.assert_error(409, "state_in_use");
    assert_eq!(r.body["extra"]["states"], json!(["draft"]));
    assert_eq!(w.stored(&uuid).await["workflow"], f["workflow"]);
    let r = w
        .call(
            &w.ada_key,
            "PATCH",
            &path,
            Some(states(&["Draft", "Shipped"])),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["workflow"]["states"][1]["key"], "shipped");
}

#[actix_web::test]
async fn archived_forms_leave_lists_and_take_no_responses() {
    let w = world().await;
    let f = w.form(&w.ada_key, "Retro", json!({})).await;
    let uuid = uuid_of(&f);
    let path = format!("/v1/forms/{uuid}/archive/");
    w.call(&w.bob_key, "DELETE", &path, None)
        .await
        .assert_error(403, "form_edit_forbidden");
    let r = w.call(&w.ada_key, "DELETE", &path, None).await;
    assert_eq!((r.status, r.text.as_str()), (204, ""));
    assert_eq!(
        w.call(&w.ada_key, "DELETE", &path, None).await.status,
        204,
        "again: nothing to do"
    );
    assert_eq!(w.stored(&uuid).await["is_archived"], true);
    assert!(w.names(&w.bob_key, "").await.is_empty());
    assert_eq!(
        w.names(&w.bob_key, "include_archived=true").await,
        ["Retro"]
    );
    assert_eq!(w.names(&w.bob_key, "filter=archived").await, ["Retro"]);
    let q = f["questions"][0]["uuid"].as_str().unwrap().to_owned();
    w.call(
        &w.bob_key,
        "POST",
        &format!("/v1/forms/{uuid}/responses/"),
        Some(json!({"content": {q: "x"}})),
    )
    .await
    .assert_error(404, "not_found");
    w.call(
        &w.ada_key,
        "DELETE",
        &format!("/v1/forms/{}/archive/", uuid::Uuid::new_v4()),
        None,
    )
    .await
    .assert_error(404, "not_found");
}

#[actix_web::test]
async fn questions_are_added_changed_reordered_and_removed() {
    let w = world().await;
    let f = w.form(&w.ada_key, "Retro", json!({})).await;
    let uuid = uuid_of(&f);
    let base = format!("/v1/forms/{uuid}/questions/");
    w.call(
        &w.bob_key,
        "POST",
        &base,
        Some(json!({"question": "More?", "short_question": "More"})),
    )
    .await
    .assert_error(403, "form_edit_forbidden");
    w.call(
        &w.ada_key,
        "POST",
        &base,
        Some(json!({"question": "More?"})),
    )
    .await
    .assert_error(400, "short_question_required");
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &base,
            Some(
                json!({"question": "Rating?", "question_type": "multiple_choice",
                        "options": ["Good", "Bad"], "generate_short_question": true}),
            ),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        (r.body["index"].clone(), r.body["short_question"].clone()),
        (json!(2), json!("Rating"))
    );
    assert_eq!(
        r.body["choices"],
        json!([{"label": "Good", "value": "Good"}, {"label": "Bad", "value": "Bad"}])
    );
    let added = uuid_of(&r.body);
    let r = w
        .call(
            &w.ada_key,
            "PATCH",
            &format!("{base}{added}/"),
            Some(json!({"question": "Your rating?"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (r.body["question"].clone(), r.body["index"].clone()),
        (json!("Your rating?"), json!(2))
    );
    w.call(
        &w.ada_key,
        "PATCH",
        &format!("{base}{}/", uuid::Uuid::new_v4()),
        Some(json!({"question": "x"})),
    )
    .await
    .assert_error(404, "not_found");
    let ids: Vec<String> = f["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(uuid_of)
        .collect();
    let reorder = format!("{base}reorder/");
    w.call(
        &w.ada_key,
        "PUT",
        &reorder,
        Some(json!({"question_uuids": [added]})),
    )
    .await
    .assert_error(400, "question_uuids_incomplete");
    w.call(
        &w.ada_key,
        "PUT",
        &reorder,
        Some(json!({"question_uuids": []})),
    )
    .await
    .assert_error(400, "question_uuids_required");
    let order = json!([added, ids[1], ids[0]]);
    let r = w
        .call(
            &w.ada_key,
            "PUT",
            &reorder,
            Some(json!({"question_uuids": order})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let got: Vec<String> = r.body["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(uuid_of)
        .collect();
    assert_eq!(json!(got), order);
    let r = w
        .call(
            &w.ada_key,
            "DELETE",
            &format!("{base}{}/delete/", ids[0]),
            None,
        )
        .await;
    assert_eq!(r.status, 204, "{}", r.text);
    let stored = w.stored(&uuid).await;
    let kept: Vec<String> = stored["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(uuid_of)
        .collect();
    assert_eq!(kept, [added.clone(), ids[1].clone()]);
    assert_eq!(stored["questions_version"], 5);
    w.call(
        &w.ada_key,
        "DELETE",
        &format!("{base}{}/delete/", ids[1]),
        None,
    )
    .await;
    w.call(
        &w.ada_key,
        "DELETE",
        &format!("{base}{added}/delete/"),
        None,
    )
    .await
    .assert_error(400, "questions_required");
}

#[actix_web::test]
async fn forms_are_listed_with_every_filter_and_order() {
    let w = world().await;
    let retro = w.form(&w.ada_key, "Retro", json!({})).await;
    let public = w
        .form(
            &w.bob_key,
            "Applications",
            json!({"allow_public_responses": true}),
        )
        .await;
    w.form(&w.bob_key, "Expenses", json!({"use_for_approval": true}))
        .await;
    let q = public["questions"][0]["uuid"].as_str().unwrap().to_owned();
    for key in [&w.ada_key, &w.cy_key] {
        let r = w
            .call(
                key,
                "POST",
                &format!("/v1/forms/{}/responses/", uuid_of(&public)),
                Some(json!({"content": {&q: "x"}})),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    let names = async |query: &str| w.names(&w.cy_key, query).await;
    assert_eq!(
        names("").await,
        ["Expenses", "Applications", "Retro"],
        "newest first"
    );
    assert_eq!(
        names("order=alphabetical&is_ascend=true").await,
        ["Applications", "Expenses", "Retro"]
    );
    assert_eq!(
        names("order=alphabetical").await,
        ["Retro", "Expenses", "Applications"]
    );
    assert_eq!(names("order=total").await[0], "Applications");
    assert_eq!(names("filter=public").await, ["Applications"]);
    assert_eq!(names("filter=approval").await, ["Expenses"]);
    assert_eq!(names("filter=workflow").await, ["Expenses"]);
    assert_eq!(w.names(&w.ada_key, "filter=me").await, ["Retro"]);
    assert_eq!(names("filter=all").await.len(), 3);
    assert_eq!(
        names(&format!("owner_user_ids={},{}", w.ada, w.admin)).await,
        ["Retro"]
    );
    assert_eq!(
        names(&format!("owner={}", w.bob)).await,
        ["Expenses", "Applications"]
    );
    assert_eq!(names("search=APPLI").await, ["Applications"]);
    let today = time::OffsetDateTime::now_utc().date();
    assert_eq!(
        names(&format!("start_date={today}&end_date={today}"))
            .await
            .len(),
        3
    );
    assert!(names("end_date=2020-01-01").await.is_empty());
    // Questions only when asked for.
    let r = w.call(&w.cy_key, "GET", "/v1/forms/", None).await;
    assert!(
        r.body["results"][0].get("questions").is_none(),
        "{}",
        r.text
    );
    assert_eq!(r.body["count"], 3);
    let r = w
        .call(&w.cy_key, "GET", "/v1/forms/?include=questions", None)
        .await;
    assert_eq!(
        r.body["results"][0]["questions"].as_array().unwrap().len(),
        2
    );
    // Labels and stars, through their own endpoints.
    let label = w
        .call(
            &w.ada_key,
            "POST",
            "/v1/labels/",
            Some(json!({"name": "Team rituals"})),
        )
        .await;
    assert_eq!(label.status, 201, "{}", label.text);
    let label = uuid_of(&label.body);
    let r = w
        .call(
            &w.ada_key,
            "POST",
            &format!("/v1/forms/{}/labels/", uuid_of(&retro)),
            Some(json!({"label_uuids": [label]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(names(&format!("labels={label}")).await, ["Retro"]);
    let r = w
        .call(
            &w.cy_key,
            "PUT",
            &format!("/v1/me/featured/forms/{}/", uuid_of(&public)),
            Some(json!({"featured": true})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(names("featured=true").await, ["Applications"]);
    assert_eq!(
        names("prioritize_featured=true").await,
        ["Applications", "Expenses", "Retro"]
    );
    assert_eq!(
        w.names(&w.ada_key, "featured=true").await,
        Vec::<String>::new(),
        "stars are private"
    );
    // Paging keeps the filters in its links.
    let r = w
        .call(&w.cy_key, "GET", "/v1/forms/?search=o&page_size=1", None)
        .await;
    assert_eq!(r.body["count"], 2);
    assert_eq!(
        r.body["next"],
        "https://api.teamcomm.test/v1/forms/?search=o&page=2&page_size=1"
    );
    // Another organization's forms are not listed.
    assert!(w.names(&w.outsider_key, "").await.is_empty());
}

#[actix_web::test]
async fn form_list_parameters_answer_their_codes() {
    let w = world().await;
    let bad = |q: &str| format!("/v1/forms/?{q}");
    let cases = [
        (
            "owner_user_ids=nope",
            400,
            "invalid_user_identifier",
            "owner_user_ids",
        ),
        ("owner=nope", 400, "invalid_user_identifier", "owner"),
        ("filter=mine", 400, "invalid_filter_value", "filter"),
        ("order=random", 400, "invalid_filter_value", "order"),
        ("include=answers", 400, "invalid_filter_value", "include"),
        ("labels=nope", 400, "invalid_filter_value", "labels"),
        (
            "start_date=2026-13-01",
            400,
            "invalid_date_range",
            "start_date",
        ),
        ("is_ascend=maybe", 400, "invalid_filter_value", "is_ascend"),
    ];
    for (query, status, code, parameter) in cases {
        let r = w.call(&w.ada_key, "GET", &bad(query), None).await;
        r.assert_error(status, code);
        assert_eq!(r.body["extra"]["parameter"], parameter, "{query}");
    }
    let many = vec![uuid::Uuid::new_v4().to_string(); 51].join(",");
    let r = w
        .call(
            &w.ada_key,
            "GET",
            &bad(&format!("owner_user_ids={many}")),
            None,
        )
        .await;
    r.assert_error(400, "too_many_filter_values");
    assert_eq!(r.body["extra"]["max"], 50);
    w.call(
        &w.ada_key,
        "GET",
        &bad(&format!("search={}", "a".repeat(257))),
        None,
    )
    .await
    .assert_error(400, "search_query_too_long");
    w.call(
        &w.ada_key,
        "GET",
        &bad("start_date=2026-02-02&end_date=2026-02-01"),
        None,
    )
    .await
    .assert_error(400, "invalid_date_range");
}

#[actix_web::test]
async fn form_owners_are_the_people_with_a_live_form() {
    let w = world().await;
    w.form(&w.bob_key, "Bee form", json!({})).await;
    w.form(&w.ada_key, "Ay form", json!({})).await;
    w.form(&w.ada_key, "Ay form 2", json!({})).await;
    let gone = w.form(&w.cy_key, "Cee form", json!({})).await;
    let r = w
        .call(
            &w.cy_key,
            "DELETE",
            &format!("/v1/forms/{}/archive/", uuid_of(&gone)),
            None,
        )
        .await;
    assert_eq!(r.status, 204);
    let r = w
        .call(&w.admin_key, "GET", "/v1/forms/form-owners/", None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["count"], 2);
    let first = &r.body["results"][0];
    assert_eq!(
        (
            first["uuid"].clone(),
            first["full_name"].clone(),
            first["role"].clone()
        ),
        (json!(w.ada), json!("Ada Lovelace"), json!("member"))
    );
    assert!(
        first["email"]
            .as_str()
            .is_some_and(|e| e.ends_with("@example.com")),
        "admins see e-mails"
    );
    let r = w
        .call(
            &w.cy_key,
            "GET",
            "/v1/forms/form-owners/?search=stone&limit=5&offset=0",
            None,
        )
        .await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["uuid"], w.bob);
    assert!(
        r.body["results"][0].get("email").is_none(),
        "members do not"
    );
    let r = w
        .call(
            &w.cy_key,
            "GET",
            "/v1/forms/form-owners/?limit=1&offset=1",
            None,
        )
        .await;
    assert_eq!(r.body["results"][0]["uuid"], w.bob);
    assert_eq!(
        r.body["previous"],
        "https://api.teamcomm.test/v1/forms/form-owners/?limit=1&offset=0"
    );
    let r = w
        .call(&w.outsider_key, "GET", "/v1/forms/form-owners/", None)
        .await;
    assert_eq!(r.body["count"], 0);
}
