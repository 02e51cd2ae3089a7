//! The one rule for human-readable names (organizations, people, teams, keys, channels): what
//! people will read in lists and chat messages must be visible, single-line text that cannot
//! reorder the text around it.
//!
//! A name is trimmed of white space, then refused (400 `params_validation_error`, the field
//! named) when it
//! - holds a control character (Unicode `Cc`: U+0000–U+001F, U+007F–U+009F), which would break
//!   lines, logs and terminals;
//! - holds a bidirectional embedding, override or isolate (U+202A–U+202E, U+2066–U+2069), which
//!   makes a name display as something else ("Trojan Source");
//! - is blank, or made only of invisible characters (white space and Unicode's
//!   `Default_Ignorable_Code_Point` set: zero-width spaces and joiners, U+FEFF, U+2060…,
//!   variation selectors, Hangul fillers), so that nobody can be named "\u{200b}";
//! - is longer than its maximum, counted in characters after trimming.

use crate::Error;

/// A name that must not be blank (team, organization, channel, key names).
pub fn name(field: &str, value: &str, max_chars: usize) -> Result<String, Error> {
    let name = optional_name(field, value, max_chars)?;
    if name.is_empty() {
        return Err(Error::invalid_field(field, BLANK));
    }
    Ok(name)
}

/// A name that may be left empty (a person's first or last name): blank input becomes `""`,
/// but a name made only of invisible characters is still refused.
pub fn optional_name(field: &str, value: &str, max_chars: usize) -> Result<String, Error> {
    let name = value.trim();
    if name.chars().any(char::is_control) {
        return Err(Error::invalid_field(
            field,
            "This field may not contain control characters (such as line breaks or tabs).",
        ));
    }
    if name.chars().any(is_bidi_control) {
        return Err(Error::invalid_field(
            field,
            "This field may not contain bidirectional override or isolate characters.",
        ));
    }
    if !name.is_empty() && name.chars().all(is_invisible) {
        return Err(Error::invalid_field(field, BLANK));
    }
    if name.chars().count() > max_chars {
        return Err(Error::invalid_field(
            field,
            format!("Ensure this field has no more than {max_chars} characters."),
        ));
    }
    Ok(name.to_owned())
}

const BLANK: &str = "This field may not be blank.";

/// Embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// White space, or a code point of Unicode's `Default_Ignorable_Code_Point` property (which
/// renderers draw as nothing).
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFF8}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    fn refusal(value: &str) -> Vec<String> {
        let e = name("name", value, 10).unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError, "{value:?}");
        e.field_errors()["name"].clone()
    }

    #[test]
    fn trims_and_keeps_visible_text() {
        assert_eq!(name("name", "  Core team \n", 10).unwrap(), "Core team");
        // Joiners and marks inside visible text are part of it (emoji sequences, Indic scripts).
        assert_eq!(
            name("name", "👩\u{200D}💻 Ops", 10).unwrap(),
            "👩\u{200D}💻 Ops"
        );
        assert_eq!(name("name", "Zoë", 10).unwrap(), "Zoë");
    }

    #[test]
    fn refuses_blank_and_invisible_only() {
        for blank in [
            "",
            "   ",
            "\u{200B}",
            " \u{FEFF} ",
            "\u{2060}\u{200C}",
            "\u{3164}",
            "\u{00AD}",
        ] {
            assert_eq!(refusal(blank), [BLANK], "{blank:?}");
        }
    }

    #[test]
    fn refuses_control_characters_anywhere() {
        for bad in [
            "a\u{0}b",
            "a\nb",
            "a\tb",
            "a\u{7F}",
            "a\u{9F}b",
            "\u{1B}[31mred",
        ] {
            assert!(refusal(bad)[0].contains("control"), "{bad:?}");
        }
    }

    #[test]
    fn refuses_bidi_overrides_and_isolates() {
        for bad in ["abc\u{202E}gpj", "\u{202A}x", "x\u{2066}y", "x\u{2069}"] {
            assert!(refusal(bad)[0].contains("bidirectional"), "{bad:?}");
        }
        // Plain right-to-left text is fine.
        assert_eq!(name("name", "שלום", 10).unwrap(), "שלום");
    }

    #[test]
    fn counts_characters_not_bytes() {
        assert_eq!(name("name", &"é".repeat(10), 10).unwrap(), "é".repeat(10));
        assert!(refusal(&"é".repeat(11))[0].contains("no more than 10"));
    }

    #[test]
    fn optional_names_may_be_blank_but_not_invisible() {
        assert_eq!(optional_name("first_name", "  ", 5).unwrap(), "");
        let e = optional_name("first_name", "\u{200B}", 5).unwrap_err();
        assert!(e.field_errors().contains_key("first_name"));
        assert!(optional_name("first_name", "a\u{202E}", 5).is_err());
    }
}
