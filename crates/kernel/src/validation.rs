//! Collecting field refusals, so that one answer names every bad field of an input instead of
//! only the first.

use crate::{Error, ErrorCode};

/// The refusals met while validating one input.
#[derive(Debug, Default)]
pub struct FieldErrors(Option<Error>);

impl FieldErrors {
    pub fn new() -> Self {
        Self::default()
    }

    /// Remembers the refusal when `result` is one. Field messages of `params_validation_error`
    /// refusals are merged into one error; any other refusal is kept only when it is the first.
    /// After a successful [`finish`](Self::finish), every noted result is `Ok`.
    pub fn note<T>(&mut self, result: &Result<T, Error>) {
        let Err(e) = result else { return };
        self.0 = Some(match self.0.take() {
            None => e.clone(),
            Some(first) if both_field_errors(&first, e) => e
                .field_errors()
                .iter()
                .flat_map(|(field, messages)| messages.iter().map(move |m| (field, m)))
                .fold(first, |acc, (field, m)| {
                    acc.with_field_error(field, m.clone())
                }),
            Some(first) => first,
        });
    }

    /// `Err` with every refusal met, else `Ok`.
    pub fn finish(self) -> Result<(), Error> {
        self.0.map_or(Ok(()), Err)
    }
}

fn both_field_errors(a: &Error, b: &Error) -> bool {
    a.code() == ErrorCode::ParamsValidationError && b.code() == ErrorCode::ParamsValidationError
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_bad_field_once_checked() {
        let mut errors = FieldErrors::new();
        errors.note(&Ok::<_, Error>(1));
        errors.note::<()>(&Err(Error::invalid_field("a", "bad a")));
        errors.note::<()>(&Err(Error::invalid_field("b", "bad b")));
        let e = errors.finish().unwrap_err();
        assert_eq!(e.code(), ErrorCode::ParamsValidationError);
        assert_eq!(e.field_errors()["a"], ["bad a"]);
        assert_eq!(e.field_errors()["b"], ["bad b"]);
        assert!(FieldErrors::new().finish().is_ok());
    }

    #[test]
    fn another_code_is_kept_only_when_first() {
        let mut errors = FieldErrors::new();
        errors.note::<()>(&Err(Error::new(ErrorCode::InvalidScore, "score")));
        errors.note::<()>(&Err(Error::invalid_field("a", "bad a")));
        assert_eq!(errors.finish().unwrap_err().code(), ErrorCode::InvalidScore);
    }
}
