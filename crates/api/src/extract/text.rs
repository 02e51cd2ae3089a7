//! Body field types for human-readable names and other text with a rule. They carry the
//! domain's rule (for names `teamcomm_kernel::text`) into the document as a pattern and a maximum
//! length, so clients and generated tests see which values the service accepts; the domain still
//! applies the rule.

use std::borrow::Cow;

use serde::Deserialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// White space the rule trims (Rust's `char::is_whitespace`), as a pattern's character class.
pub(crate) const TRIMMED: &str =
    r"\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000";
/// Control characters and bidirectional embeddings, overrides and isolates: never inside a name.
const FORBIDDEN: &str = r"\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069";
/// Characters drawn as nothing (default-ignorable) in the Basic Multilingual Plane; the few
/// astral ones (U+1BCA0…, U+E0000…) are left to the domain rule.
const INVISIBLE: &str = r"\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF0-\uFFF8";

/// The pattern of a name: trimmable space around text with no forbidden character and, unless
/// `may_be_blank`, at least one visible character.
fn pattern(may_be_blank: bool) -> String {
    let inner = format!("[^{FORBIDDEN}]*[^{FORBIDDEN}{TRIMMED}{INVISIBLE}][^{FORBIDDEN}]*");
    let inner = if may_be_blank {
        format!("({inner})?")
    } else {
        inner
    };
    format!("^[{TRIMMED}]*{inner}[{TRIMMED}]*$")
}

fn name_schema(max: usize, may_be_blank: bool) -> RefOr<Schema> {
    let mut builder = ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(max))
        .pattern(Some(pattern(may_be_blank)));
    if !may_be_blank {
        builder = builder.min_length(Some(1));
    }
    RefOr::T(Schema::Object(builder.build()))
}

/// A name that must not be blank, of at most `MAX` characters (teams, organizations, keys,
/// channels).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct Name<const MAX: usize>(pub String);

impl<const MAX: usize> PartialSchema for Name<MAX> {
    fn schema() -> RefOr<Schema> {
        name_schema(MAX, false)
    }
}

impl<const MAX: usize> ToSchema for Name<MAX> {
    fn name() -> Cow<'static, str> {
        format!("Name{MAX}").into()
    }
}

/// A name that may be left blank but not made of invisible characters only (first and last
/// names, occupation).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct OptionalName<const MAX: usize>(pub String);

impl<const MAX: usize> PartialSchema for OptionalName<MAX> {
    fn schema() -> RefOr<Schema> {
        name_schema(MAX, true)
    }
}

impl<const MAX: usize> ToSchema for OptionalName<MAX> {
    fn name() -> Cow<'static, str> {
        format!("OptionalName{MAX}").into()
    }
}

/// Control characters (`char::is_control`): none inside one-line text.
const CONTROL: &str = r"\u0000-\u001F\u007F-\u009F";

/// Free text on one line (a response's `submission_source`): white space around it is trimmed
/// and a blank is none; no control character inside, at most `MAX` characters once trimmed.
/// The pattern states the length (white space around does not count).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct OneLine<const MAX: usize>(pub String);

impl<const MAX: usize> PartialSchema for OneLine<MAX> {
    fn schema() -> RefOr<Schema> {
        let pattern = format!("^[{TRIMMED}]*[^{CONTROL}]{{0,{MAX}}}[{TRIMMED}]*$");
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(pattern))
                .build(),
        ))
    }
}

impl<const MAX: usize> ToSchema for OneLine<MAX> {
    fn name() -> Cow<'static, str> {
        format!("OneLine{MAX}").into()
    }
}

/// Free text that may span lines (a transition's note): white space around it is trimmed and a
/// blank is none; line breaks and tabs, but no other control character nor a bidirectional
/// override or isolate, at most `MAX` characters once trimmed.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct LongText<const MAX: usize>(pub String);

impl<const MAX: usize> PartialSchema for LongText<MAX> {
    fn schema() -> RefOr<Schema> {
        let refused = r"\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069";
        let pattern = format!("^[{TRIMMED}]*[^{refused}]{{0,{MAX}}}[{TRIMMED}]*$");
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(pattern))
                .build(),
        ))
    }
}

impl<const MAX: usize> ToSchema for LongText<MAX> {
    fn name() -> Cow<'static, str> {
        format!("LongText{MAX}").into()
    }
}

/// A wall-clock time, `HH:MM` (a check-in's time, its report's time).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct ClockTime(pub String);

impl ClockTime {
    /// The schema, for a field that adds to it.
    pub fn builder() -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(format!(
                "^[{TRIMMED}]*([01][0-9]|2[0-3]):[0-5][0-9][{TRIMMED}]*$"
            )))
            .examples(["09:30"])
    }
}

impl PartialSchema for ClockTime {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(Self::builder().build()))
    }
}

impl ToSchema for ClockTime {}

/// A form's chat command as the domain accepts it: once trimmed, 1 to `MAX_COMMAND` ASCII
/// letters (either case: it is kept lower-case), digits, `-` or `_`, starting with a letter or
/// digit. The pattern states the length (white space around does not count).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct ChatCommand(pub String);

impl PartialSchema for ChatCommand {
    fn schema() -> RefOr<Schema> {
        let more = teamcomm_forms::forms::MAX_COMMAND - 1;
        let pattern = format!("^[{TRIMMED}]*[A-Za-z0-9][A-Za-z0-9_-]{{0,{more}}}[{TRIMMED}]*$");
        RefOr::T(Schema::Object(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(pattern))
                .examples(["standup"])
                .build(),
        ))
    }
}

impl ToSchema for ChatCommand {}

/// An e-mail address as the domain accepts it: something, `@`, then a domain that does not
/// start with a dot and has one; no white space or forbidden character inside.
fn email_pattern() -> String {
    let plain = format!("[^{FORBIDDEN}{TRIMMED}");
    format!("{plain}@]+@{plain}.][^{FORBIDDEN}{TRIMMED}]*\\.[^{FORBIDDEN}{TRIMMED}]*")
}

fn identifier_schema(email_only: bool) -> RefOr<Schema> {
    let chat_id = format!(
        "[^@{FORBIDDEN}{TRIMMED}]*[^@{FORBIDDEN}{TRIMMED}{INVISIBLE}][^@{FORBIDDEN}{TRIMMED}]*"
    );
    let body = if email_only {
        email_pattern()
    } else {
        format!("({}|{chat_id})", email_pattern())
    };
    // A pattern, not `format: email`: tools disagree on what that format admits.
    let builder = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(teamcomm_org::MAX_IDENTIFIER))
        .pattern(Some(format!("^[{TRIMMED}]*{body}[{TRIMMED}]*$")))
        .examples(["ada@example.com"]);
    RefOr::T(Schema::Object(builder.build()))
}

/// Whom to invite: an e-mail address or a chat-platform user id (no white space inside).
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct Identifier(pub String);

impl PartialSchema for Identifier {
    fn schema() -> RefOr<Schema> {
        identifier_schema(false)
    }
}

impl ToSchema for Identifier {}

/// An e-mail address.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct EmailAddress(pub String);

impl PartialSchema for EmailAddress {
    fn schema() -> RefOr<Schema> {
        identifier_schema(true)
    }
}

impl ToSchema for EmailAddress {}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(schema: RefOr<Schema>, value: &str) -> bool {
        let json = serde_json::to_value(schema).unwrap();
        let pattern = json["pattern"].as_str().unwrap();
        regex::Regex::new(pattern).unwrap().is_match(value)
    }

    #[test]
    fn name_patterns_follow_the_text_rule() {
        for ok in ["Core", " Core team ", "Équipe 😀", "\tA\n"] {
            assert!(fits(name_schema(10, false), ok), "{ok:?}");
        }
        for bad in [
            "",
            "   ",
            "\u{200b}",
            "a\u{0}b",
            "a\tb",
            "x\u{202e}y",
            "\u{94}",
        ] {
            assert!(!fits(name_schema(10, false), bad), "{bad:?}");
        }
        assert!(fits(name_schema(10, true), ""));
        assert!(fits(name_schema(10, true), "  "));
        assert!(!fits(name_schema(10, true), "\u{200b}"));
    }

    #[test]
    fn free_text_command_and_time_patterns_follow_the_domain_rules() {
        let line = OneLine::<5>::schema;
        for ok in ["", "  ", "a:b c", "\tabcde\n", "😀😀😀😀😀"] {
            assert!(fits(line(), ok), "{ok:?}");
        }
        for bad in ["a\nb", "abcdef", "a\u{7}", "\u{85}x\u{9f}"] {
            assert!(!fits(line(), bad), "{bad:?}");
        }
        let text = LongText::<5>::schema;
        for ok in ["", " a\nb\tc ", "\n\u{85}abcde\n"] {
            assert!(fits(text(), ok), "{ok:?}");
        }
        for bad in ["abcdef", "a\u{7}", "a\rb", "x\u{202e}y", "\u{2066}"] {
            assert!(!fits(text(), bad), "{bad:?}");
        }
        for ok in ["00:00", " 09:30\n", "23:59"] {
            assert!(fits(ClockTime::schema(), ok), "{ok:?}");
        }
        for bad in ["9:30", "24:00", "12:60", "09:30:00", "0930"] {
            assert!(!fits(ClockTime::schema(), bad), "{bad:?}");
        }
        let longest = "a".repeat(teamcomm_forms::forms::MAX_COMMAND);
        for ok in ["standup", " Daily-2_b\n", &longest] {
            assert!(fits(ChatCommand::schema(), ok), "{ok:?}");
        }
        for bad in [
            "",
            " ",
            "-a",
            "_a",
            "a b",
            "ö",
            "a?",
            &format!("{longest}a"),
        ] {
            assert!(!fits(ChatCommand::schema(), bad), "{bad:?}");
        }
    }

    #[test]
    fn identifier_patterns() {
        for ok in ["ada@example.com", "U024BE7LH", " ada@b.c "] {
            assert!(fits(Identifier::schema(), ok), "{ok:?}");
        }
        for bad in ["a b", "ada@", "ada@.com", "ada@localhost", "@b.c", "a\u{7}"] {
            assert!(!fits(Identifier::schema(), bad), "{bad:?}");
        }
        assert!(!fits(EmailAddress::schema(), "U024BE7LH"));
        assert!(fits(EmailAddress::schema(), "ada@example.com"));
    }
}
