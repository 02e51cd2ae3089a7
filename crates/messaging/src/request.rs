//! `POST /v1/send-message/` as the domain reads it: [`SendMessageRequest`] is what the HTTP
//! layer fills from the body, [`SendMessageRequest::validate`] checks everything that needs no
//! storage and answers the [`SendMessage`] command the service resolves.

use serde_json::{Map, Value};
use teamcomm_kernel::{Error, ErrorCode, FieldErrors, TeamId, UserId, text};
use uuid::Uuid;

use crate::ChannelType;
use crate::message::{MessageButton, MessageContent};
use crate::platform::{BotAppearance, Button, ButtonKind};

/// The longest message (and thread response), in characters: Slack's limit for a post.
pub const MAX_MESSAGE_CHARS: usize = 40_000;
/// At most this many buttons under a message.
pub const MAX_BUTTONS: usize = 25;
/// The longest button label, in characters (Slack's button text).
pub const MAX_BUTTON_LABEL_CHARS: usize = 75;
/// The longest interactive button value, in characters (Slack's).
pub const MAX_BUTTON_VALUE_CHARS: usize = 2_000;
/// At most this many replies in the thread of a message.
pub const MAX_THREAD_RESPONSES: usize = 10;
/// The longest URL accepted (image, icon, button), in bytes.
pub const MAX_URL_LEN: usize = 2_048;
/// The largest `metadata` object, serialised, in bytes.
pub const MAX_METADATA_BYTES: usize = 16 * 1024;
/// The longest bot name and icon emoji, in characters.
pub const MAX_BOT_NAME_CHARS: usize = 80;
/// The longest channel id or thread id, in characters (as a registered channel's id).
pub const MAX_CHANNEL_ID_CHARS: usize = 200;

/// The body of `POST /v1/send-message/`, as sent. The top-level `bot_username`,
/// `bot_icon_url` and `bot_icon_emoji` of the spec go into [`platform_settings`](Self::platform_settings)
/// too: they are the same settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SendMessageRequest {
    pub message: Option<String>,
    pub image_url: Option<String>,
    pub buttons: Vec<ButtonInput>,
    /// Person UUIDs or e-mail addresses, as typed.
    pub target_users: Vec<String>,
    pub target_channels: Vec<ChannelTargetInput>,
    /// Every active member of each team receives it.
    pub target_teams: Vec<Uuid>,
    pub platform_settings: PlatformSettings,
    /// A person UUID (admins only).
    pub send_as_user: Option<String>,
    /// Accepted, and read by nothing yet: the directory records no time off, so nobody is
    /// skipped.
    pub skip_users_on_time_off: bool,
    /// Must be an object.
    pub metadata: Option<Value>,
    /// Present: edit that earlier message instead of sending a new one.
    pub bot_message_id: Option<String>,
    pub thread_responses: Vec<ThreadResponseInput>,
}

/// A button as sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ButtonInput {
    pub label: Option<String>,
    /// `link` or `interactive`; absent, a button with a `url` is a link, else interactive.
    pub button_type: Option<String>,
    pub url: Option<String>,
    pub value: Option<String>,
    pub callback_url: Option<String>,
    /// Every other member of the button object, kept as sent.
    pub settings: Map<String, Value>,
}

/// A channel target as sent: a bare id is `{id}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelTargetInput {
    pub id: String,
    pub channel_type: Option<String>,
    /// The platform id of the message whose thread to post in.
    pub thread: Option<String>,
}

/// `platform_settings` as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlatformSettings {
    pub bot_username: Option<String>,
    pub bot_icon_url: Option<String>,
    pub bot_icon_emoji: Option<String>,
    pub is_ephemeral: bool,
}

/// One of `thread_responses` as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadResponseInput {
    pub message: Option<String>,
}

/// A person named in `target_users`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PersonRef {
    Id(UserId),
    /// Lower-cased.
    Email(String),
}

/// A channel named in `target_channels`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelTarget {
    pub id: String,
    pub channel_type: Option<ChannelType>,
    pub thread: Option<String>,
}

/// A send-message request that passed every check needing no storage.
#[derive(Debug, Clone, PartialEq)]
pub struct SendMessage {
    pub content: MessageContent,
    pub users: Vec<PersonRef>,
    pub channels: Vec<ChannelTarget>,
    pub teams: Vec<TeamId>,
    pub send_as_user: Option<UserId>,
    /// The message to edit, as the client named it.
    pub edit: Option<String>,
    pub thread_responses: Vec<String>,
}

impl SendMessageRequest {
    /// Checks the request, naming every bad plain field at once; a specific code (`button_*`,
    /// `send_as_user_*`, `invalid_thread_responses`) answers alone.
    pub fn validate(self) -> Result<SendMessage, Error> {
        let settings = &self.platform_settings;
        let send_as_user = self.send_as_user.as_deref().map(str::trim);
        if send_as_user.is_some()
            && [
                &settings.bot_username,
                &settings.bot_icon_url,
                &settings.bot_icon_emoji,
            ]
            .iter()
            .any(|s| s.is_some())
        {
            return Err(Error::new(
                ErrorCode::SendAsUserConflict,
                "send_as_user cannot be combined with bot_username, bot_icon_url or bot_icon_emoji.",
            ));
        }
        let send_as_user = send_as_user
            .map(|s| {
                Uuid::parse_str(s).map(UserId).map_err(|_| {
                    Error::new(
                        ErrorCode::SendAsUserInvalidUuid,
                        "send_as_user must be a user UUID.",
                    )
                })
            })
            .transpose()?;

        let edit = self
            .bot_message_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);

        let mut errors = FieldErrors::new();
        let text = message_text(self.message.as_deref(), self.image_url.is_some());
        errors.note(&text);
        let image_url = optional_https_url("image_url", self.image_url.as_deref());
        errors.note(&image_url);
        let buttons = buttons(&self.buttons);
        errors.note(&buttons);
        let appearance = appearance(settings);
        errors.note(&appearance);
        let metadata = metadata(self.metadata);
        errors.note(&metadata);
        let users = person_refs(&self.target_users);
        errors.note(&users);
        let channels = channel_targets(&self.target_channels);
        errors.note(&channels);
        let no_target = self.target_users.is_empty()
            && self.target_channels.is_empty()
            && self.target_teams.is_empty();
        if no_target && edit.is_none() {
            errors.note::<()>(&Err(Error::invalid_field(
                "targets",
                "Name at least one target: target_users, target_channels or target_teams.",
            )));
        }
        let thread_responses = thread_responses(&self.thread_responses, edit.is_some());
        errors.note(&thread_responses);
        errors.finish()?;

        // Every result is `Ok` once `finish` passed.
        Ok(SendMessage {
            content: MessageContent {
                text: text?,
                image_url: image_url?,
                buttons: buttons?,
                appearance: appearance?,
                is_ephemeral: settings.is_ephemeral,
                metadata: metadata?,
            },
            users: users?,
            channels: channels?,
            teams: self.target_teams.into_iter().map(TeamId).collect(),
            send_as_user,
            edit,
            thread_responses: thread_responses?,
        })
    }
}

fn message_text(message: Option<&str>, has_image: bool) -> Result<String, Error> {
    let text = message.map(str::trim).unwrap_or_default();
    if text.is_empty() && !has_image {
        return Err(Error::invalid_field(
            "message",
            "Write a message (or send an image_url).",
        ));
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(Error::invalid_field(
            "message",
            format!("Ensure this field has no more than {MAX_MESSAGE_CHARS} characters."),
        ));
    }
    Ok(text.to_owned())
}

/// An absolute `https://` URL with a host, or `http://` too when `allow_http`; no white space
/// or control characters, at most [`MAX_URL_LEN`] bytes.
pub fn is_web_url(url: &str, allow_http: bool) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://").filter(|_| allow_http));
    let Some(rest) = rest else { return false };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    url.len() <= MAX_URL_LEN
        && !host.is_empty()
        && !host.starts_with(['@', ':'])
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn optional_https_url(field: &str, url: Option<&str>) -> Result<Option<String>, Error> {
    match url.map(str::trim) {
        None => Ok(None),
        Some(url) if is_web_url(url, false) => Ok(Some(url.to_owned())),
        Some(_) => Err(Error::invalid_field(field, "Enter an https:// URL.")),
    }
}

fn button_error(code: ErrorCode, index: usize, detail: &'static str) -> Error {
    Error::new(code, detail).with_extra("index", index)
}

fn buttons(inputs: &[ButtonInput]) -> Result<Vec<MessageButton>, Error> {
    if inputs.len() > MAX_BUTTONS {
        return Err(Error::new(
            ErrorCode::ButtonLimitExceeded,
            "A message has at most 25 buttons.",
        )
        .with_extra("limit", MAX_BUTTONS));
    }
    inputs
        .iter()
        .enumerate()
        .map(|(i, b)| button(i, b))
        .collect()
}

fn button(index: usize, input: &ButtonInput) -> Result<MessageButton, Error> {
    use ErrorCode::*;
    let label = input.label.as_deref().map(str::trim).unwrap_or_default();
    if label.is_empty() {
        return Err(button_error(
            ButtonLabelRequired,
            index,
            "Every button needs a label.",
        ));
    }
    if label.chars().count() > MAX_BUTTON_LABEL_CHARS {
        return Err(button_error(
            ButtonLabelTooLong,
            index,
            "A button label has at most 75 characters.",
        ));
    }
    let label = text::name(
        &format!("buttons[{index}].label"),
        label,
        MAX_BUTTON_LABEL_CHARS,
    )?;
    let url = input.url.as_deref().map(str::trim);
    let is_link = match input.button_type.as_deref().map(str::trim) {
        None => url.is_some(),
        Some(t) if t.eq_ignore_ascii_case("link") => true,
        Some(t) if t.eq_ignore_ascii_case("interactive") => false,
        Some(_) => {
            return Err(button_error(
                ButtonTypeInvalid,
                index,
                "button_type must be link or interactive.",
            ));
        }
    };
    let kind = if is_link {
        let url = url
            .filter(|u| !u.is_empty())
            .ok_or_else(|| button_error(ButtonUrlRequired, index, "A link button needs a url."))?;
        if !is_web_url(url, true) {
            return Err(button_error(
                ButtonUrlInvalid,
                index,
                "A button url must be an http:// or https:// URL.",
            ));
        }
        ButtonKind::Link {
            url: url.to_owned(),
        }
    } else {
        let value = input.value.as_deref().unwrap_or_default();
        if value.trim().is_empty() {
            return Err(button_error(
                ButtonValueRequired,
                index,
                "An interactive button needs a value.",
            ));
        }
        if value.chars().count() > MAX_BUTTON_VALUE_CHARS {
            return Err(button_error(
                ButtonValueTooLong,
                index,
                "A button value has at most 2000 characters.",
            ));
        }
        ButtonKind::Interactive {
            value: value.to_owned(),
        }
    };
    let callback_url = match input.callback_url.as_deref().map(str::trim) {
        None => None,
        Some(u) if is_web_url(u, false) => Some(u.to_owned()),
        Some(_) => {
            return Err(button_error(
                ButtonUrlInvalid,
                index,
                "A button callback_url must be an https:// URL.",
            ));
        }
    };
    Ok(MessageButton {
        button: Button { label, kind },
        callback_url,
        settings: input.settings.clone(),
    })
}

fn appearance(settings: &PlatformSettings) -> Result<BotAppearance, Error> {
    let name = |field: &str, value: &Option<String>| {
        value
            .as_deref()
            .map(|v| text::name(field, v, MAX_BOT_NAME_CHARS))
            .transpose()
    };
    let mut errors = FieldErrors::new();
    let username = name("bot_username", &settings.bot_username);
    errors.note(&username);
    let icon_url = optional_https_url("bot_icon_url", settings.bot_icon_url.as_deref());
    errors.note(&icon_url);
    let icon_emoji = name("bot_icon_emoji", &settings.bot_icon_emoji);
    errors.note(&icon_emoji);
    errors.finish()?;
    Ok(BotAppearance {
        username: username?,
        icon_url: icon_url?,
        icon_emoji: icon_emoji?,
    })
}

fn metadata(metadata: Option<Value>) -> Result<Map<String, Value>, Error> {
    match metadata {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => {
            if Value::Object(map.clone()).to_string().len() > MAX_METADATA_BYTES {
                return Err(Error::invalid_field(
                    "metadata",
                    format!("metadata holds at most {MAX_METADATA_BYTES} bytes of JSON."),
                ));
            }
            Ok(map)
        }
        Some(_) => Err(Error::invalid_field(
            "metadata",
            "metadata must be an object.",
        )),
    }
}

/// A person UUID, else an e-mail address (lower-cased); duplicates collapse.
fn person_refs(typed: &[String]) -> Result<Vec<PersonRef>, Error> {
    let mut refs: Vec<PersonRef> = Vec::with_capacity(typed.len());
    for t in typed {
        let t = t.trim();
        let person = if let Ok(id) = Uuid::parse_str(t) {
            PersonRef::Id(UserId(id))
        } else if is_email(t) {
            PersonRef::Email(t.to_lowercase())
        } else {
            return Err(Error::invalid_field(
                "target_users",
                format!("\"{t}\" is neither a user UUID nor an e-mail address."),
            ));
        };
        if !refs.contains(&person) {
            refs.push(person);
        }
    }
    Ok(refs)
}

/// `local@domain`, no white space: enough to tell an address from a typo'd UUID; the
/// directory decides whether it is someone's.
fn is_email(s: &str) -> bool {
    match s.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && s.len() <= 254
                && !s.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    }
}

fn channel_targets(inputs: &[ChannelTargetInput]) -> Result<Vec<ChannelTarget>, Error> {
    let field = "target_channels";
    let platform_id = |what: &str, id: &str| {
        let id = id.trim();
        if id.is_empty()
            || id.chars().count() > MAX_CHANNEL_ID_CHARS
            || id.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(Error::invalid_field(
                field,
                format!("A channel {what} has 1 to {MAX_CHANNEL_ID_CHARS} characters, no spaces."),
            ));
        }
        Ok(id.to_owned())
    };
    let mut targets: Vec<ChannelTarget> = Vec::with_capacity(inputs.len());
    for input in inputs {
        let target = ChannelTarget {
            id: platform_id("id", &input.id)?,
            channel_type: input
                .channel_type
                .as_deref()
                .map(|t| {
                    ChannelType::parse(t.trim()).map_err(|_| {
                        Error::invalid_field(
                            field,
                            "channel_type must be channel, private_channel, group_chat or direct_message.",
                        )
                    })
                })
                .transpose()?,
            thread: input
                .thread
                .as_deref()
                .map(|t| platform_id("thread", t))
                .transpose()?,
        };
        if !targets
            .iter()
            .any(|t| t.id == target.id && t.thread == target.thread)
        {
            targets.push(target);
        }
    }
    Ok(targets)
}

fn thread_responses(inputs: &[ThreadResponseInput], is_edit: bool) -> Result<Vec<String>, Error> {
    let invalid = |detail: &'static str| Error::new(ErrorCode::InvalidThreadResponses, detail);
    if is_edit && !inputs.is_empty() {
        return Err(invalid(
            "An edit (bot_message_id) cannot add thread responses.",
        ));
    }
    if inputs.len() > MAX_THREAD_RESPONSES {
        return Err(invalid("A message has at most 10 thread responses.")
            .with_extra("limit", MAX_THREAD_RESPONSES));
    }
    inputs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let text = r.message.as_deref().map(str::trim).unwrap_or_default();
            if text.is_empty() {
                return Err(
                    invalid("Every thread response needs a message.").with_extra("index", i)
                );
            }
            if text.chars().count() > MAX_MESSAGE_CHARS {
                return Err(invalid("A thread response has at most 40000 characters.")
                    .with_extra("index", i));
            }
            Ok(text.to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> SendMessageRequest {
        SendMessageRequest {
            message: Some("Hello".into()),
            target_users: vec!["ada@acme.test".into()],
            ..Default::default()
        }
    }

    fn link(label: &str, url: &str) -> ButtonInput {
        ButtonInput {
            label: Some(label.into()),
            button_type: Some("link".into()),
            url: Some(url.into()),
            ..Default::default()
        }
    }

    fn interactive(label: &str, value: &str) -> ButtonInput {
        ButtonInput {
            label: Some(label.into()),
            button_type: Some("interactive".into()),
            value: Some(value.into()),
            ..Default::default()
        }
    }

    #[track_caller]
    fn code(r: SendMessageRequest) -> ErrorCode {
        r.validate().unwrap_err().code()
    }

    #[test]
    fn a_plain_message_to_a_person_passes() {
        let send = request().validate().unwrap();
        assert_eq!(send.content.text, "Hello");
        assert_eq!(send.users, [PersonRef::Email("ada@acme.test".into())]);
        assert!(send.edit.is_none());
    }

    #[test]
    fn every_button_code() {
        use ErrorCode::*;
        let with = |b: ButtonInput| SendMessageRequest {
            buttons: vec![interactive("ok", "1"), b],
            ..request()
        };
        let cases = [
            (ButtonInput::default(), ButtonLabelRequired),
            (link("  ", "https://x.test"), ButtonLabelRequired),
            (link(&"x".repeat(76), "https://x.test"), ButtonLabelTooLong),
            (
                ButtonInput {
                    button_type: Some("command".into()),
                    ..link("a", "https://x.test")
                },
                ButtonTypeInvalid,
            ),
            (
                ButtonInput {
                    url: None,
                    ..link("a", "")
                },
                ButtonUrlRequired,
            ),
            (link("a", "javascript:alert(1)"), ButtonUrlInvalid),
            (link("a", "https:///path"), ButtonUrlInvalid),
            (link("a", "https://x.test/a b"), ButtonUrlInvalid),
            (interactive("a", " "), ButtonValueRequired),
            (interactive("a", &"v".repeat(2001)), ButtonValueTooLong),
            (
                ButtonInput {
                    callback_url: Some("http://x.test/hook".into()),
                    ..interactive("a", "1")
                },
                ButtonUrlInvalid,
            ),
        ];
        for (button, expected) in cases {
            let e = with(button.clone()).validate().unwrap_err();
            assert_eq!(e.code(), expected, "{button:?}");
            assert_eq!(e.extra()["index"], 1, "{button:?}");
        }
        let too_many = SendMessageRequest {
            buttons: vec![interactive("a", "1"); 26],
            ..request()
        };
        assert_eq!(code(too_many), ButtonLimitExceeded);
        let control = with(link("a\nb", "https://x.test")).validate().unwrap_err();
        assert!(control.field_errors().contains_key("buttons[1].label"));
    }

    #[test]
    fn buttons_take_their_type_from_the_url_when_unnamed_and_keep_their_settings() {
        let mut settings = Map::new();
        settings.insert("label_after_click".into(), json!("Done"));
        let send = SendMessageRequest {
            buttons: vec![
                ButtonInput {
                    label: Some("Docs".into()),
                    url: Some("http://docs.test/x".into()),
                    ..Default::default()
                },
                ButtonInput {
                    label: Some("Yes".into()),
                    value: Some("yes".into()),
                    button_type: Some("Interactive".into()),
                    callback_url: Some("https://hooks.test/b".into()),
                    settings: settings.clone(),
                    ..Default::default()
                },
            ],
            ..request()
        }
        .validate()
        .unwrap();
        let b = &send.content.buttons;
        assert_eq!(
            b[0].button.kind,
            ButtonKind::Link {
                url: "http://docs.test/x".into()
            }
        );
        assert_eq!(
            b[1].button.kind,
            ButtonKind::Interactive {
                value: "yes".into()
            }
        );
        assert_eq!(b[1].callback_url.as_deref(), Some("https://hooks.test/b"));
        assert_eq!(b[1].settings, settings);
        assert_eq!(
            SendMessageRequest {
                buttons: vec![interactive("a", "1"); 25],
                ..request()
            }
            .validate()
            .unwrap()
            .content
            .buttons
            .len(),
            25
        );
    }

    #[test]
    fn send_as_user_codes() {
        use ErrorCode::*;
        let as_user = |id: &str| SendMessageRequest {
            send_as_user: Some(id.into()),
            ..request()
        };
        let id = Uuid::now_v7();
        assert_eq!(
            as_user(&id.to_string()).validate().unwrap().send_as_user,
            Some(UserId(id))
        );
        assert_eq!(code(as_user("nope")), SendAsUserInvalidUuid);
        for settings in [
            PlatformSettings {
                bot_username: Some("Bot".into()),
                ..Default::default()
            },
            PlatformSettings {
                bot_icon_url: Some("https://x.test/i.png".into()),
                ..Default::default()
            },
            PlatformSettings {
                bot_icon_emoji: Some(":tada:".into()),
                ..Default::default()
            },
        ] {
            let r = SendMessageRequest {
                platform_settings: settings,
                ..as_user("nope")
            };
            // The conflict is named before the UUID is read.
            assert_eq!(code(r), SendAsUserConflict);
        }
    }

    #[test]
    fn thread_responses_are_limited_and_need_text() {
        let replies = |n: usize, text: &str| SendMessageRequest {
            thread_responses: vec![
                ThreadResponseInput {
                    message: Some(text.into())
                };
                n
            ],
            ..request()
        };
        assert_eq!(
            replies(10, "more")
                .validate()
                .unwrap()
                .thread_responses
                .len(),
            10
        );
        assert_eq!(code(replies(11, "more")), ErrorCode::InvalidThreadResponses);
        assert_eq!(code(replies(1, " ")), ErrorCode::InvalidThreadResponses);
        let edit = SendMessageRequest {
            bot_message_id: Some(Uuid::now_v7().to_string()),
            ..replies(1, "more")
        };
        assert_eq!(code(edit), ErrorCode::InvalidThreadResponses);
    }

    #[test]
    fn plain_fields_are_named_together() {
        let e = SendMessageRequest {
            message: Some(" ".into()),
            image_url: Some("http://x.test/a.png".into()),
            target_users: vec!["not a person".into()],
            platform_settings: PlatformSettings {
                bot_icon_url: Some("ftp://x.test/i.png".into()),
                bot_username: Some("a\u{202E}b".into()),
                ..Default::default()
            },
            metadata: Some(json!([1])),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        let fields: Vec<&str> = e.field_errors().keys().map(String::as_str).collect();
        assert_eq!(
            fields,
            [
                "bot_icon_url",
                "bot_username",
                "image_url",
                "metadata",
                "target_users"
            ]
        );
        // Blank text passes with an image; no target is refused unless it is an edit.
        let e = SendMessageRequest {
            message: None,
            image_url: Some("https://x.test/a.png".into()),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.field_errors().keys().collect::<Vec<_>>(), ["targets"]);
        assert!(
            SendMessageRequest {
                bot_message_id: Some("m".into()),
                ..SendMessageRequest {
                    message: Some("fixed".into()),
                    ..Default::default()
                }
            }
            .validate()
            .is_ok()
        );
        let long = SendMessageRequest {
            message: Some("x".repeat(MAX_MESSAGE_CHARS + 1)),
            ..request()
        };
        assert!(
            long.validate()
                .unwrap_err()
                .field_errors()
                .contains_key("message")
        );
        let big = SendMessageRequest {
            metadata: Some(json!({"k": "x".repeat(MAX_METADATA_BYTES)})),
            ..request()
        };
        assert!(
            big.validate()
                .unwrap_err()
                .field_errors()
                .contains_key("metadata")
        );
    }

    #[test]
    fn targets_are_read_and_deduplicated() {
        let id = Uuid::now_v7();
        let team = Uuid::now_v7();
        let send = SendMessageRequest {
            target_users: vec![
                id.to_string(),
                " Ada@Acme.test ".into(),
                "ada@acme.test".into(),
                id.to_string(),
            ],
            target_channels: vec![
                ChannelTargetInput {
                    id: "C1".into(),
                    ..Default::default()
                },
                ChannelTargetInput {
                    id: "C1".into(),
                    channel_type: Some("group_chat".into()),
                    thread: None,
                },
                ChannelTargetInput {
                    id: "C1".into(),
                    channel_type: None,
                    thread: Some("171.2".into()),
                },
            ],
            target_teams: vec![team],
            metadata: Some(json!({"ticket": 7})),
            ..request()
        }
        .validate()
        .unwrap();
        assert_eq!(
            send.users,
            [
                PersonRef::Id(UserId(id)),
                PersonRef::Email("ada@acme.test".into())
            ]
        );
        assert_eq!(send.channels.len(), 2);
        assert_eq!(send.channels[1].thread.as_deref(), Some("171.2"));
        assert_eq!(send.teams, [TeamId(team)]);
        assert_eq!(send.content.metadata["ticket"], 7);
        for bad in [
            ChannelTargetInput {
                id: " ".into(),
                ..Default::default()
            },
            ChannelTargetInput {
                id: "C1".into(),
                channel_type: Some("room".into()),
                thread: None,
            },
            ChannelTargetInput {
                id: "C1".into(),
                channel_type: None,
                thread: Some("a b".into()),
            },
        ] {
            let e = SendMessageRequest {
                target_channels: vec![bad],
                ..request()
            }
            .validate()
            .unwrap_err();
            assert!(e.field_errors().contains_key("target_channels"));
        }
    }

    #[test]
    fn web_urls() {
        assert!(is_web_url("https://x.test", false));
        assert!(is_web_url("https://x.test/a?b#c", false));
        assert!(!is_web_url("http://x.test", false));
        assert!(is_web_url("http://x.test", true));
        for bad in [
            "https://",
            "https://@x",
            "x.test",
            "https://x .test",
            "HTTPS:x",
        ] {
            assert!(!is_web_url(bad, true), "{bad}");
        }
        assert!(!is_web_url(
            &format!("https://x.test/{}", "a".repeat(MAX_URL_LEN)),
            true
        ));
    }
}
