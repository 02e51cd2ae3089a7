//! `dailybot kudos …`: give (to a person, to a team), list, org, wall-of-fame, and how the CLI
//! reports the kudos codes (406 is its "Daily kudos limit reached").

use super::*;
use crate::kudos::person;

/// A business organization with an admin (API key) and three people with CLI tokens, all in the
/// team "Core".
struct Org {
    org: String,
    admin_key: String,
    ada: String,
    ada_token: String,
    bob: String,
    bob_token: String,
    cy_token: String,
}

async fn org(app: &TestApp) -> Org {
    let org = app.create_org("business").await;
    let admin = person(app, &org, "Adele", "Admin", "admin").await;
    let session = app.session(&admin).await;
    let admin_key = key_for(app, &session, &admin).await;
    let ada = person(app, &org, "Ada", "Lovelace", "member").await;
    let bob = person(app, &org, "Bob", "Stone", "member").await;
    let cy = person(app, &org, "Cy", "Young", "member").await;
    let core = create_team(app, &admin_key, "Core").await;
    for member in [&ada, &bob, &cy] {
        add_member(app, &admin_key, &core, member).await;
    }
    Org {
        ada_token: cli_token(app, &ada).await,
        bob_token: cli_token(app, &bob).await,
        cy_token: cli_token(app, &cy).await,
        org,
        admin_key,
        ada,
        bob,
    }
}

/// Every kudos of the organization, as its admin lists them over the API.
async fn stored(app: &TestApp, o: &Org) -> Vec<Value> {
    let r = app
        .get_with_key("/v1/kudos/organization/?page_size=100", &o.admin_key)
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["results"].as_array().unwrap().clone()
}

fn receiver_names(k: &Value) -> Vec<&str> {
    k["receivers"]
        .as_array()
        .expect("receivers")
        .iter()
        .map(|r| r["full_name"].as_str().unwrap())
        .collect()
}

#[actix_web::test]
async fn kudos_are_given_to_people_and_teams_then_listed_and_ranked() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let ada = token_env(&o.ada_token);

    let given = dailybot(
        &app,
        &ada,
        &[
            "kudos",
            "give",
            "--to",
            "Bob Stone",
            "--message",
            "Great release",
            "--yes",
            "--json",
        ],
    )
    .await
    .ok_json();
    assert_eq!(given["user"]["uuid"], o.ada);
    assert_eq!(receiver_names(&given), ["Bob Stone"]);
    let run = dailybot(
        &app,
        &ada,
        &[
            "kudos",
            "give",
            "--team",
            "Core",
            "--message",
            "Shipped it",
            "--value",
            "Teamwork",
            "--yes",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    assert!(run.stdout.contains("Kudos sent to team Core"), "{run:#?}");

    let kudos = stored(&app, &o).await;
    assert_eq!(kudos.len(), 2);
    assert_eq!(kudos[1]["id"], given["id"]);
    let to_team = &kudos[0];
    assert_eq!(
        receiver_names(to_team),
        ["Bob Stone", "Cy Young"],
        "not the giver"
    );
    assert_eq!(to_team["company_value"]["name"], "Teamwork");
    assert!(
        run.stdout.contains(to_team["id"].as_str().unwrap()),
        "{run:#?}"
    );
    assert_eq!(app.events(&o.org, Some("kudos.posted")).await.len(), 2);

    // Lists: what the caller gave or received; the CLI's filter aliases.
    let bob = token_env(&o.bob_token);
    let listed = dailybot(&app, &bob, &["kudos", "list", "--json"])
        .await
        .ok_json();
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");
    let given_by_ada = dailybot(
        &app,
        &ada,
        &["kudos", "list", "--filter", "given", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(given_by_ada.as_array().map(Vec::len), Some(2));
    let received_by_ada = dailybot(
        &app,
        &ada,
        &["kudos", "list", "--filter", "KUDOS_RECEIVED", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(received_by_ada, json!([]));
    let run = dailybot(&app, &bob, &["kudos", "list", "--search", "release"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    for needle in ["Ada Lovelace", "Bob Stone", "Great release"] {
        assert!(run.stdout.contains(needle), "{needle:?} missing: {run:#?}");
    }
    assert!(!run.stdout.contains("Shipped it"), "{run:#?}");

    // The organization's list: admins, with an API key.
    let org_list = dailybot(&app, &key_env(&o.admin_key), &["kudos", "org", "--json"])
        .await
        .ok_json();
    assert_eq!(org_list.as_array().map(Vec::len), Some(2), "{org_list}");
    dailybot(&app, &ada, &["kudos", "org", "--json"])
        .await
        .assert_api_error(EXIT_PERMISSION, 403, Some("insufficient_scope"));

    // Bob received two kudos, Cy one; Ada gave both.
    let cy = token_env(&o.cy_token);
    let wall = dailybot(
        &app,
        &cy,
        &["kudos", "wall-of-fame", "--limit", "1", "--json"],
    )
    .await
    .ok_json();
    assert_eq!(wall["top_receiver"]["user"]["full_name"], "Bob Stone");
    assert_eq!(wall["top_receiver"]["kudos_received"], 2);
    assert_eq!(wall["top_giver"]["user"]["full_name"], "Ada Lovelace");
    assert_eq!(wall["top_giver"]["kudos_given"], 2);
    assert_eq!(
        wall["leaderboard_summary"],
        json!({"position": 2, "total": 2})
    );
    assert_eq!(wall["leaderboard"]["count"], 2);
    assert_eq!(
        wall["leaderboard"]["results"].as_array().map(Vec::len),
        Some(1)
    );
    assert_eq!(
        wall["dna_distribution"][0]["company_value"]["value"],
        "Teamwork"
    );
    assert_eq!(wall["dna_distribution"][0]["percentage"], 100.0);
    let run = dailybot(&app, &cy, &["kudos", "wall-of-fame"]).await;
    assert_eq!(run.code, EXIT_OK, "{run:#?}");
    for needle in [
        "Bob Stone (2 received)",
        "Ada Lovelace (2 given)",
        "2 of 2",
        "Teamwork",
    ] {
        assert!(run.stdout.contains(needle), "{needle:?} missing: {run:#?}");
    }
}

#[actix_web::test]
async fn kudos_refusals_reach_the_cli_with_their_codes_and_exit_codes() {
    let app = TestApp::spawn().await;
    let o = org(&app).await;
    let ada = token_env(&o.ada_token);
    let give = |to: &'static str| {
        [
            "kudos",
            "give",
            "--to",
            to,
            "--message",
            "Thanks",
            "--yes",
            "--json",
        ]
    };
    // Kudos to oneself: the CLI refuses them itself, knowing who is logged in from
    // `GET /v1/cli/auth/status/` (the server's own refusal, 400 `self_kudos_not_allowed`, is
    // tested in tests/api/kudos.rs).
    let own = dailybot(&app, &ada, &give("Ada Lovelace")).await;
    assert_eq!(own.code, EXIT_PERMISSION, "{own:#?}");
    let refusal: Value = serde_json::from_str(own.stdout.trim()).expect("a JSON refusal");
    assert_eq!(
        refusal,
        json!({"error": "You cannot give kudos to yourself.", "status": 403})
    );
    let nowhere = Uuid::now_v7().to_string();
    dailybot(
        &app,
        &ada,
        &[
            "kudos",
            "give",
            "--team",
            &nowhere,
            "--message",
            "Hi",
            "--yes",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("no_valid_team"));
    dailybot(
        &app,
        &ada,
        &[
            "kudos",
            "give",
            "--to",
            "Bob Stone",
            "--message",
            "Hi",
            "--value",
            "Kindness",
            "--yes",
            "--json",
        ],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("company_value_not_found"));
    dailybot(
        &app,
        &ada,
        &["kudos", "list", "--filter", "sideways", "--json"],
    )
    .await
    .assert_api_error(EXIT_USAGE, 400, Some("invalid_kudos_filter"));
    assert_eq!(stored(&app, &o).await, Vec::<Value>::new());

    // Ten a day, then the CLI's "Daily kudos limit reached" (406, exit 4).
    for _ in 0..10 {
        dailybot(&app, &ada, &give("Bob Stone")).await.ok_json();
    }
    let run = dailybot(&app, &ada, &give("Bob Stone")).await;
    run.assert_api_error(EXIT_PERMISSION, 406, Some("kudos_daily_limit_reached"));
    assert_eq!(run.json()["error"], "Daily kudos limit reached.");
    let run = dailybot(
        &app,
        &ada,
        &[
            "kudos",
            "give",
            "--to",
            "Bob Stone",
            "--message",
            "x",
            "--yes",
        ],
    )
    .await;
    assert_eq!(run.code, EXIT_PERMISSION, "{run:#?}");
    assert!(
        format!("{}{}", run.stdout, run.stderr).contains("Daily kudos limit reached"),
        "{run:#?}"
    );
    let kudos = stored(&app, &o).await;
    assert_eq!(kudos.len(), 10);
    assert!(kudos.iter().all(|k| k["receivers"][0]["uuid"] == o.bob));
}
