//! The Matrix adapter: a bot account on a homeserver, through the Client-Server API v3.
//!
//! Choices a reader needs:
//! - **Sends land once.** A send is a `PUT …/send/m.room.message/{txnId}` whose transaction id is
//!   the message's idempotency key; the homeserver answers a repeated id with the first event id.
//!   Transaction ids are scoped to the *device*, so the bot's token must belong to the pinned
//!   device id (checked once, with `whoami`, before the first send or edit).
//! - **Direct messages** go to the room the bot's `m.direct` account data records for the person
//!   (the newest one), or to a new `trusted_private_chat` room that is then recorded there.
//!   Creating and recording hold one lock per adapter, so two sends to a new person make one
//!   room; the gap between `createRoom` and recording it is not covered across processes.
//! - **Buttons** do not exist in Matrix. Link buttons become links; interactive buttons become a
//!   numbered list ("Reply with a number"), and their values ride along in the event content
//!   (`org.teamcomm.buttons`). A person's *reply or thread reply* to such a message that is just
//!   a listed number comes back from [`ChatPlatform::poll`] as a button click.
//! - **Images** are a link: an HTML `<img>` in Matrix must point at the homeserver's own media
//!   (`mxc://`), and copying an outside image there is out of scope.
//! - **Appearance** (per-message name and icon) has no Matrix equivalent and is ignored.
//! - **Conversations** opened for several people are private rooms whose alias is derived from
//!   the idempotency key, so a retried open finds the room instead of making another. Two
//!   processes opening with one key at once still answer one room, but the loser's room is left
//!   behind (Synapse makes the room before it finds the alias taken, and answers 409).
//! - **Channels** are the joined rooms that have a name; DMs and opened conversations have none.
//!   The bot joins a room by being invited to it: [`ChatPlatform::poll`] accepts every invitation
//!   it sees, so whoever may invite the bot on the homeserver decides where it can be.
//! - **Polling** reads up to 100 new messages per room and poll; a room that got more since the
//!   cursor reports only its latest 100.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::{StreamExt, TryStreamExt, stream};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use teamcomm_messaging::platform::{
    Button, ButtonKind, ChatPlatform, Destination, InboundBatch, InboundEvent, OutgoingMessage,
    PlatformChannel, PlatformError, PlatformKind, SentMessage,
};
use tokio::sync::{Mutex, OnceCell};

use crate::http::{REQUEST_TIMEOUT, excerpt, read_answer, retry_after, segment, transport};

const CLIENT_API: &str = "_matrix/client/v3";
/// The event-content key that carries an interactive message's button values.
const BUTTONS_KEY: &str = "org.teamcomm.buttons";
/// Timeline events per room in one sync answer; more since the cursor are not reported.
const SYNC_TIMELINE_LIMIT: u32 = 100;
/// Slack for a long poll's answer on top of its wait.
const SYNC_GRACE: Duration = Duration::from_secs(10);
/// Rooms examined at once when listing channels.
const LISTING_CONCURRENCY: usize = 8;

/// How to reach the homeserver as the bot.
#[derive(Clone)]
pub struct MatrixConfig {
    /// Base URL of the homeserver's client API, e.g. `https://matrix.example.org`.
    pub homeserver_url: String,
    pub access_token: String,
    /// The bot's user id, e.g. `@teamcomm:example.org`.
    pub bot_user_id: String,
    /// The device the token belongs to: transaction ids (send dedupe) are scoped to it.
    pub device_id: String,
}

impl fmt::Debug for MatrixConfig {
    // The token never reaches a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MatrixConfig")
            .field("homeserver_url", &self.homeserver_url)
            .field("access_token", &"<redacted>")
            .field("bot_user_id", &self.bot_user_id)
            .field("device_id", &self.device_id)
            .finish()
    }
}

/// [`ChatPlatform`] over a Matrix homeserver. Build one per connected organization and keep it:
/// the identity check runs once per instance, and the DM lock only serialises sends through the
/// same instance.
pub struct MatrixPlatform {
    config: MatrixConfig,
    http: reqwest::Client,
    /// Set once `whoami` confirmed the token's user and device.
    identity_checked: OnceCell<()>,
    /// Serialises finding-or-creating rooms: DMs (a read-modify-write of `m.direct`) and opened
    /// conversations (a room that loses its alias to a concurrent open is left behind).
    room_creation: Mutex<()>,
}

/// A refused or failed call, with the Matrix error code kept for the callers that branch on it.
#[derive(Debug)]
enum Failure {
    /// Already classified: the homeserver was not reached, or its answer was unreadable.
    Classified(PlatformError),
    /// The homeserver answered an error.
    Refused {
        status: StatusCode,
        errcode: String,
        message: String,
        retry_after: Option<Duration>,
    },
}

impl Failure {
    /// The alias asked for belongs to another room: `M_ROOM_IN_USE` when checked up front, 409
    /// when a concurrent request took it while this room was being made.
    fn is_alias_taken(&self) -> bool {
        matches!(self, Failure::Refused { status, errcode, .. }
            if errcode == "M_ROOM_IN_USE" || *status == StatusCode::CONFLICT)
    }

    fn is_not_found(&self) -> bool {
        matches!(self, Failure::Refused { status, .. } if *status == StatusCode::NOT_FOUND)
    }
}

impl From<Failure> for PlatformError {
    fn from(failure: Failure) -> Self {
        let (status, errcode, message, retry_after) = match failure {
            Failure::Classified(error) => return error,
            Failure::Refused {
                status,
                errcode,
                message,
                retry_after,
            } => (status, errcode, message, retry_after),
        };
        let detail = format!("{status} {errcode}: {message}");
        if status == StatusCode::TOO_MANY_REQUESTS || errcode == "M_LIMIT_EXCEEDED" {
            PlatformError::RateLimited { retry_after }
        } else if status == StatusCode::UNAUTHORIZED
            || matches!(
                errcode.as_str(),
                "M_UNKNOWN_TOKEN" | "M_MISSING_TOKEN" | "M_USER_DEACTIVATED"
            )
        {
            PlatformError::Unauthorized(detail)
        } else if status == StatusCode::FORBIDDEN || status == StatusCode::NOT_FOUND {
            PlatformError::NotFound(detail)
        } else if status.is_server_error() || status == StatusCode::REQUEST_TIMEOUT {
            PlatformError::Temporary(detail)
        } else {
            PlatformError::Permanent(detail)
        }
    }
}

/// The standard error body (`retry_after_ms` only on `M_LIMIT_EXCEEDED`).
#[derive(Deserialize, Default)]
struct ErrorBody {
    #[serde(default)]
    errcode: String,
    #[serde(default)]
    error: String,
    retry_after_ms: Option<u64>,
}

impl MatrixPlatform {
    pub fn new(config: MatrixConfig, http: reqwest::Client) -> Self {
        MatrixPlatform {
            config,
            http,
            identity_checked: OnceCell::new(),
            room_creation: Mutex::new(()),
        }
    }

    /// One client-API call; `path` is below `/_matrix/client/v3/`, its ids already encoded.
    async fn call(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<Value, Failure> {
        let base = self.config.homeserver_url.trim_end_matches('/');
        let mut url = reqwest::Url::parse(&format!("{base}/{CLIENT_API}/{path}")).map_err(|e| {
            Failure::Classified(PlatformError::Permanent(format!(
                "bad homeserver URL {base:?}: {e}"
            )))
        })?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut request = self
            .http
            .request(method, url)
            .bearer_auth(&self.config.access_token)
            .timeout(timeout);
        if let Some(body) = body {
            request = request.json(body);
        }
        let answer = request
            .send()
            .await
            .map_err(|e| Failure::Classified(transport(e)))?;
        let status = answer.status();
        let header_delay = retry_after(answer.headers());
        let bytes = read_answer(answer).await.map_err(Failure::Classified)?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| {
                Failure::Classified(PlatformError::Permanent(format!(
                    "unreadable homeserver answer: {e}"
                )))
            });
        }
        let error: ErrorBody = serde_json::from_slice(&bytes).unwrap_or_default();
        Err(Failure::Refused {
            status,
            errcode: error.errcode,
            message: excerpt(&error.error, 200),
            // The body's milliseconds are more precise than the header's seconds.
            retry_after: error
                .retry_after_ms
                .map(Duration::from_millis)
                .or(header_delay),
        })
    }

    async fn get(&self, path: &str) -> Result<Value, Failure> {
        self.call(Method::GET, path, &[], None, REQUEST_TIMEOUT)
            .await
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value, Failure> {
        self.call(Method::POST, path, &[], Some(body), REQUEST_TIMEOUT)
            .await
    }

    async fn put(&self, path: &str, body: &Value) -> Result<Value, Failure> {
        self.call(Method::PUT, path, &[], Some(body), REQUEST_TIMEOUT)
            .await
    }

    /// Refuses a token of another user or device: its transaction ids would not dedupe.
    async fn check_identity(&self) -> Result<(), PlatformError> {
        self.identity_checked
            .get_or_try_init(|| async {
                let me = self.get("account/whoami").await?;
                let user_id = me["user_id"].as_str().unwrap_or_default();
                let device_id = me["device_id"].as_str().unwrap_or_default();
                if user_id != self.config.bot_user_id || device_id != self.config.device_id {
                    return Err(PlatformError::Permanent(format!(
                        "the access token belongs to {user_id} on device {device_id:?}, not to {} \
                         on the pinned device {:?}",
                        self.config.bot_user_id, self.config.device_id
                    )));
                }
                Ok(())
            })
            .await
            .map(|_| ())
    }

    /// Puts one `m.room.message` event; `txn_id` makes a repeat land once.
    async fn put_message(
        &self,
        room_id: &str,
        txn_id: &str,
        content: &Value,
    ) -> Result<String, PlatformError> {
        let path = format!(
            "rooms/{}/send/m.room.message/{}",
            segment(room_id),
            segment(txn_id)
        );
        let answer = self.put(&path, content).await?;
        answer["event_id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| PlatformError::Permanent("send answered no event_id".into()))
    }

    fn account_data_path(&self, kind: &str) -> String {
        format!(
            "user/{}/account_data/{kind}",
            segment(&self.config.bot_user_id)
        )
    }

    /// The bot's `m.direct`: person → DM rooms, oldest first. Kept as the JSON it is, so that
    /// writing it back never drops an entry another client wrote in a shape we do not expect.
    async fn direct_map(&self) -> Result<Map<String, Value>, PlatformError> {
        match self.get(&self.account_data_path("m.direct")).await {
            Ok(Value::Object(direct)) => Ok(direct),
            Ok(other) => Err(PlatformError::Permanent(format!(
                "the bot's m.direct is not an object: {}",
                excerpt(&other.to_string(), 100)
            ))),
            // Never written yet.
            Err(failure) if failure.is_not_found() => Ok(Map::new()),
            Err(failure) => Err(failure.into()),
        }
    }

    /// Refuses a user id the homeserver does not know (an invite to one would succeed).
    async fn check_user_exists(&self, user_id: &str) -> Result<(), PlatformError> {
        self.get(&format!("profile/{}", segment(user_id)))
            .await
            .map(|_| ())
            .map_err(|failure| match failure.is_not_found() {
                true => PlatformError::NotFound(format!("no Matrix user {user_id}")),
                false => failure.into(),
            })
    }

    /// The DM room with this person: the newest recorded in `m.direct`, else a new one.
    async fn direct_room(&self, user_id: &str) -> Result<String, PlatformError> {
        let _creating = self.room_creation.lock().await;
        let mut direct = self.direct_map().await?;
        let newest = direct
            .get(user_id)
            .and_then(Value::as_array)
            .and_then(|rooms| rooms.last());
        if let Some(room_id) = newest.and_then(Value::as_str) {
            return Ok(room_id.to_owned());
        }
        self.check_user_exists(user_id).await?;
        let created = self
            .post(
                "createRoom",
                &json!({
                    "is_direct": true,
                    "preset": "trusted_private_chat",
                    "invite": [user_id],
                }),
            )
            .await?;
        let room_id = room_id_of(&created)?;
        let rooms = direct.entry(user_id).or_insert_with(|| json!([]));
        match rooms.as_array_mut() {
            Some(rooms) => rooms.push(json!(room_id)),
            None => *rooms = json!([room_id]),
        }
        self.put(&self.account_data_path("m.direct"), &Value::Object(direct))
            .await?;
        Ok(room_id)
    }

    /// Resolves `#localpart:server`, `None` when no room has it.
    async fn resolve_alias(&self, alias: &str) -> Result<Option<String>, PlatformError> {
        match self
            .get(&format!("directory/room/{}", segment(alias)))
            .await
        {
            Ok(answer) => room_id_of(&answer).map(Some),
            Err(failure) if failure.is_not_found() => Ok(None),
            Err(failure) => Err(failure.into()),
        }
    }

    /// The bot's server name: the part of its user id after the first `:`.
    fn server_name(&self) -> Result<&str, PlatformError> {
        self.config
            .bot_user_id
            .split_once(':')
            .map(|(_, server)| server)
            .ok_or_else(|| {
                PlatformError::Permanent(format!(
                    "bot user id {:?} has no server name",
                    self.config.bot_user_id
                ))
            })
    }

    /// One sync: events after `since` (or the initial state), waiting at most `wait`.
    async fn sync(&self, since: Option<&str>, wait: Duration) -> Result<Value, PlatformError> {
        let timeline_limit = match since {
            // The first sync only fetches a cursor: its history is not reported.
            None => 1,
            Some(_) => SYNC_TIMELINE_LIMIT,
        };
        let filter = json!({
            "presence": {"types": []},
            "account_data": {"types": []},
            "room": {
                "timeline": {
                    "types": ["m.room.message"],
                    "not_senders": [self.config.bot_user_id],
                    "limit": timeline_limit,
                },
                "state": {"types": []},
                "ephemeral": {"types": []},
                "account_data": {"types": []},
            },
        })
        .to_string();
        let wait_ms = wait.as_millis().to_string();
        let mut query = vec![("filter", filter.as_str()), ("timeout", wait_ms.as_str())];
        if let Some(since) = since {
            query.push(("since", since));
        }
        Ok(self
            .call(Method::GET, "sync", &query, None, wait + SYNC_GRACE)
            .await?)
    }

    /// A person's message as an inbound event: a reply, or a click when it is a listed number
    /// answering a bot message with buttons.
    async fn inbound(&self, room_id: &str, event: &Value) -> Option<InboundEvent> {
        let sender = event["sender"].as_str()?;
        let content = &event["content"];
        let relation = &content["m.relates_to"];
        // The bot's own messages (never), notices (other bots) and edits are not replies.
        if sender == self.config.bot_user_id
            || content["msgtype"] == "m.notice"
            || relation["rel_type"] == "m.replace"
        {
            return None;
        }
        let message_id = event["event_id"].as_str()?.to_owned();
        let text = strip_reply_fallback(content["body"].as_str()?).to_owned();
        let in_reply_to = replied_to(relation);
        if let (Some(parent), Ok(choice)) = (&in_reply_to, text.trim().parse::<usize>())
            && let Some(value) = self.button_value(room_id, parent, choice).await
        {
            return Some(InboundEvent::ButtonClicked {
                platform_user_id: sender.to_owned(),
                channel_id: room_id.to_owned(),
                message_id: parent.clone(),
                value,
            });
        }
        Some(InboundEvent::Reply {
            platform_user_id: sender.to_owned(),
            channel_id: room_id.to_owned(),
            message_id,
            text,
            in_reply_to,
        })
    }

    /// The value of the `choice`-th (1-based) interactive button of a bot message, as last edited.
    async fn button_value(&self, room_id: &str, event_id: &str, choice: usize) -> Option<String> {
        let path = format!("rooms/{}/event/{}", segment(room_id), segment(event_id));
        let event = self.get(&path).await.ok()?;
        if event["sender"] != self.config.bot_user_id.as_str() {
            return None;
        }
        let edited = &event["unsigned"]["m.relations"]["m.replace"]["content"]["m.new_content"];
        let content = if edited.is_object() {
            edited
        } else {
            &event["content"]
        };
        let buttons = content[BUTTONS_KEY].as_array()?;
        let button = buttons.get(choice.checked_sub(1)?)?;
        button["value"].as_str().map(str::to_owned)
    }

    /// Joins the rooms a sync answer shows the bot invited to; an invitation withdrawn meanwhile
    /// is skipped.
    async fn accept_invitations(&self, answer: &Value) -> Result<(), PlatformError> {
        let Some(invitations) = answer["rooms"]["invite"].as_object() else {
            return Ok(());
        };
        for room_id in invitations.keys() {
            let joined = self
                .post(&format!("join/{}", segment(room_id)), &json!({}))
                .await;
            match joined.map_err(PlatformError::from) {
                Ok(_) | Err(PlatformError::NotFound(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// A channel as listed: `None` for a room without a name.
    async fn named_room(&self, room_id: String) -> Result<Option<PlatformChannel>, PlatformError> {
        let state = |kind: &str| format!("rooms/{}/state/{kind}/", segment(&room_id));
        let name = match self.get(&state("m.room.name")).await {
            Ok(content) => content["name"].as_str().unwrap_or_default().to_owned(),
            Err(failure) if failure.is_not_found() => String::new(),
            Err(failure) => return Err(failure.into()),
        };
        if name.is_empty() {
            return Ok(None);
        }
        let join_rule = match self.get(&state("m.room.join_rules")).await {
            Ok(content) => content["join_rule"].as_str().unwrap_or("invite").to_owned(),
            Err(failure) if failure.is_not_found() => "invite".to_owned(),
            Err(failure) => return Err(failure.into()),
        };
        Ok(Some(PlatformChannel {
            id: room_id,
            name,
            is_private: join_rule != "public",
        }))
    }
}

#[async_trait]
impl ChatPlatform for MatrixPlatform {
    fn kind(&self) -> PlatformKind {
        PlatformKind::Matrix
    }

    async fn send(&self, message: &OutgoingMessage) -> Result<SentMessage, PlatformError> {
        self.check_identity().await?;
        let mut content = render(message);
        let room_id = match &message.destination {
            Destination::Person { platform_user_id } => self.direct_room(platform_user_id).await?,
            Destination::Channel { channel_id, thread } => {
                if let Some(root) = thread {
                    content["m.relates_to"] = json!({
                        "rel_type": "m.thread",
                        "event_id": root,
                        // Clients without threads show it as a reply to the root.
                        "is_falling_back": true,
                        "m.in_reply_to": {"event_id": root},
                    });
                }
                channel_id.clone()
            }
        };
        let event_id = self
            .put_message(&room_id, &message.idempotency_key, &content)
            .await?;
        Ok(SentMessage {
            channel_id: room_id,
            message_id: event_id,
        })
    }

    async fn edit(
        &self,
        sent: &SentMessage,
        message: &OutgoingMessage,
    ) -> Result<(), PlatformError> {
        self.check_identity().await?;
        let new_content = render(message);
        let mut content = json!({
            "msgtype": "m.text",
            // What clients without edits show.
            "body": format!("* {}", new_content["body"].as_str().unwrap_or_default()),
            "format": "org.matrix.custom.html",
            "formatted_body": format!("* {}", new_content["formatted_body"].as_str().unwrap_or_default()),
            "m.relates_to": {"rel_type": "m.replace", "event_id": sent.message_id},
        });
        content["m.new_content"] = new_content;
        // Its own transaction id: the same edit retried lands once, another edit of the same
        // message (even under the same key) is a new event.
        let txn_id = format!(
            "edit-{}",
            hex_digest(&[
                message.idempotency_key.as_bytes(),
                sent.message_id.as_bytes(),
                content.to_string().as_bytes(),
            ])
        );
        self.put_message(&sent.channel_id, &txn_id, &content)
            .await
            .map(|_| ())
    }

    async fn open_conversation(
        &self,
        platform_user_ids: &[String],
        idempotency_key: &str,
    ) -> Result<String, PlatformError> {
        let alias_localpart = format!(
            "teamcomm-{}",
            &hex_digest(&[idempotency_key.as_bytes()])[..32]
        );
        let alias = format!("#{alias_localpart}:{}", self.server_name()?);
        let _creating = self.room_creation.lock().await;
        if let Some(room_id) = self.resolve_alias(&alias).await? {
            return Ok(room_id);
        }
        for user_id in platform_user_ids {
            self.check_user_exists(user_id).await?;
        }
        let created = self
            .post(
                "createRoom",
                &json!({
                    "preset": "private_chat",
                    "room_alias_name": alias_localpart,
                    "invite": platform_user_ids,
                }),
            )
            .await;
        match created {
            Ok(answer) => room_id_of(&answer),
            // A concurrent open with the same key (another process) won the alias.
            Err(failure) if failure.is_alias_taken() => {
                self.resolve_alias(&alias).await?.ok_or_else(|| {
                    PlatformError::Temporary(format!("alias {alias} in use but unresolvable"))
                })
            }
            Err(failure) => Err(failure.into()),
        }
    }

    async fn list_channels(&self) -> Result<Vec<PlatformChannel>, PlatformError> {
        let joined = self.get("joined_rooms").await?;
        let room_ids: Vec<String> = serde_json::from_value(joined["joined_rooms"].clone())
            .map_err(|e| PlatformError::Permanent(format!("unreadable joined_rooms: {e}")))?;
        let channels: Vec<Option<PlatformChannel>> = stream::iter(room_ids)
            .map(|room_id| self.named_room(room_id))
            .buffered(LISTING_CONCURRENCY)
            .try_collect()
            .await?;
        Ok(channels.into_iter().flatten().collect())
    }

    async fn poll(
        &self,
        cursor: Option<&str>,
        wait: Duration,
    ) -> Result<InboundBatch, PlatformError> {
        let since = match cursor {
            Some(cursor) => cursor.to_owned(),
            None => {
                let initial = self.sync(None, Duration::ZERO).await?;
                self.accept_invitations(&initial).await?;
                next_batch(&initial)?
            }
        };
        let answer = self.sync(Some(&since), wait).await?;
        self.accept_invitations(&answer).await?;
        let mut events = Vec::new();
        if let Some(rooms) = answer["rooms"]["join"].as_object() {
            for (room_id, room) in rooms {
                for event in room["timeline"]["events"].as_array().into_iter().flatten() {
                    events.extend(self.inbound(room_id, event).await);
                }
            }
        }
        Ok(InboundBatch {
            events,
            next_cursor: next_batch(&answer)?,
        })
    }
}

fn room_id_of(answer: &Value) -> Result<String, PlatformError> {
    answer["room_id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| PlatformError::Permanent("homeserver answered no room_id".into()))
}

fn next_batch(answer: &Value) -> Result<String, PlatformError> {
    answer["next_batch"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| PlatformError::Permanent("sync answered no next_batch".into()))
}

/// Lowercase hex SHA-256 of the parts, each length-prefixed so no two part lists collide.
fn hex_digest(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part);
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// What a person's message answers: the event replied to, else the thread's root.
fn replied_to(relation: &Value) -> Option<String> {
    let reply = relation["m.in_reply_to"]["event_id"].as_str();
    let in_thread = relation["rel_type"] == "m.thread";
    // In a thread, a reply marked as falling back only points at the latest thread event.
    let explicit_reply = reply.filter(|_| !(in_thread && relation["is_falling_back"] == true));
    explicit_reply
        .or_else(|| in_thread.then(|| relation["event_id"].as_str()).flatten())
        .map(str::to_owned)
}

/// A reply's own text, without the quoted `> ` lines older clients put before it.
fn strip_reply_fallback(body: &str) -> &str {
    if !body.starts_with("> ") {
        return body;
    }
    match body.split_once("\n\n") {
        Some((quote, rest)) if quote.lines().all(|line| line.starts_with('>')) => rest,
        _ => body,
    }
}

/// A message's Matrix content: the text, then the image link, link buttons and numbered
/// interactive buttons, as plain `body` and HTML `formatted_body`.
fn render(message: &OutgoingMessage) -> Value {
    let mut plain = message.text.clone();
    let mut html = html_text(&message.text);
    if let Some(image_url) = &message.image_url {
        plain.push_str(&format!("\n\n{image_url}"));
        html.push_str(&format!(
            "<p><a href=\"{}\">{}</a></p>",
            html_escape(image_url),
            html_escape(image_url)
        ));
    }
    let (links, choices): (Vec<&Button>, Vec<&Button>) = message
        .buttons
        .iter()
        .partition(|button| matches!(button.kind, ButtonKind::Link { .. }));
    if !links.is_empty() {
        plain.push('\n');
        let mut anchors = Vec::new();
        for button in &links {
            if let ButtonKind::Link { url } = &button.kind {
                plain.push_str(&format!("\n{}: {url}", button.label));
                anchors.push(format!(
                    "<a href=\"{}\">{}</a>",
                    html_escape(url),
                    html_escape(&button.label)
                ));
            }
        }
        html.push_str(&format!("<p>{}</p>", anchors.join(" · ")));
    }
    let mut values = Vec::new();
    if !choices.is_empty() {
        plain.push_str("\n\nReply with a number:");
        html.push_str("<p>Reply with a number:</p><ol>");
        for (index, button) in choices.iter().enumerate() {
            if let ButtonKind::Interactive { value } = &button.kind {
                plain.push_str(&format!("\n{}. {}", index + 1, button.label));
                html.push_str(&format!("<li>{}</li>", html_escape(&button.label)));
                values.push(json!({"label": button.label, "value": value}));
            }
        }
        html.push_str("</ol>");
    }
    let mut content = Map::new();
    content.insert("msgtype".into(), json!("m.text"));
    content.insert("body".into(), json!(plain));
    content.insert("format".into(), json!("org.matrix.custom.html"));
    content.insert("formatted_body".into(), json!(html));
    if !values.is_empty() {
        content.insert(BUTTONS_KEY.into(), json!(values));
    }
    Value::Object(content)
}

/// Plain text as HTML: escaped, line breaks kept.
fn html_text(text: &str) -> String {
    html_escape(text).replace('\n', "<br>")
}

fn html_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            _ => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamcomm_messaging::platform::BotAppearance;

    fn message(buttons: Vec<Button>) -> OutgoingMessage {
        OutgoingMessage {
            idempotency_key: "k".into(),
            destination: Destination::Channel {
                channel_id: "!r".into(),
                thread: None,
            },
            text: "Hi <team>\nbye".into(),
            image_url: Some("https://img.example/a.png".into()),
            buttons,
            appearance: BotAppearance::default(),
        }
    }

    #[test]
    fn renders_links_and_a_numbered_list() {
        let content = render(&message(vec![
            Button {
                label: "Open".into(),
                kind: ButtonKind::Link {
                    url: "https://x.example/?a=1&b=2".into(),
                },
            },
            Button {
                label: "Yes".into(),
                kind: ButtonKind::Interactive { value: "y".into() },
            },
            Button {
                label: "No".into(),
                kind: ButtonKind::Interactive { value: "n".into() },
            },
        ]));
        assert_eq!(
            content["body"],
            "Hi <team>\nbye\n\nhttps://img.example/a.png\n\nOpen: https://x.example/?a=1&b=2\
             \n\nReply with a number:\n1. Yes\n2. No"
        );
        let html = content["formatted_body"].as_str().unwrap();
        assert!(html.starts_with("Hi &lt;team&gt;<br>bye"), "{html}");
        assert!(html.contains("<a href=\"https://x.example/?a=1&amp;b=2\">Open</a>"));
        assert!(html.contains("<ol><li>Yes</li><li>No</li></ol>"));
        assert_eq!(
            content[BUTTONS_KEY],
            json!([{"label": "Yes", "value": "y"}, {"label": "No", "value": "n"}])
        );
    }

    #[test]
    fn plain_message_carries_no_button_values() {
        let mut plain = message(vec![]);
        plain.image_url = None;
        let content = render(&plain);
        assert_eq!(content["body"], "Hi <team>\nbye");
        assert!(content.get(BUTTONS_KEY).is_none());
    }

    #[test]
    fn reply_target_prefers_the_explicit_reply_then_the_thread_root() {
        assert_eq!(
            replied_to(&json!({"m.in_reply_to": {"event_id": "$a"}})),
            Some("$a".into())
        );
        let fallback = json!({"rel_type": "m.thread", "event_id": "$root",
            "is_falling_back": true, "m.in_reply_to": {"event_id": "$latest"}});
        assert_eq!(replied_to(&fallback), Some("$root".into()));
        let in_thread_reply = json!({"rel_type": "m.thread", "event_id": "$root",
            "is_falling_back": false, "m.in_reply_to": {"event_id": "$b"}});
        assert_eq!(replied_to(&in_thread_reply), Some("$b".into()));
        assert_eq!(replied_to(&Value::Null), None);
    }

    #[test]
    fn reply_fallback_quote_is_stripped() {
        assert_eq!(strip_reply_fallback("> <@bot:x> hi\n> there\n\nyes"), "yes");
        assert_eq!(
            strip_reply_fallback("> not a quote block"),
            "> not a quote block"
        );
        assert_eq!(strip_reply_fallback("plain"), "plain");
    }

    #[test]
    fn errors_map_to_retry_classes() {
        let refused = |status: u16, errcode: &str| -> PlatformError {
            Failure::Refused {
                status: StatusCode::from_u16(status).unwrap(),
                errcode: errcode.into(),
                message: String::new(),
                retry_after: Some(Duration::from_millis(1500)),
            }
            .into()
        };
        assert_eq!(
            refused(429, "M_LIMIT_EXCEEDED"),
            PlatformError::RateLimited {
                retry_after: Some(Duration::from_millis(1500))
            }
        );
        assert!(matches!(
            refused(401, "M_UNKNOWN_TOKEN"),
            PlatformError::Unauthorized(_)
        ));
        assert!(matches!(
            refused(403, "M_FORBIDDEN"),
            PlatformError::NotFound(_)
        ));
        assert!(matches!(
            refused(404, "M_NOT_FOUND"),
            PlatformError::NotFound(_)
        ));
        assert!(matches!(refused(502, ""), PlatformError::Temporary(_)));
        assert!(matches!(
            refused(400, "M_BAD_JSON"),
            PlatformError::Permanent(_)
        ));
    }
}
