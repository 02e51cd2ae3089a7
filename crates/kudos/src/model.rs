//! Kudos, company values, and what the wall of fame is made of.

use teamcomm_kernel::{Error, ErrorCode, OrgId, Page, UserId, WireEnum};
use teamcomm_org::User;
use time::OffsetDateTime;
use uuid::Uuid;

/// A value of the organization's culture that kudos can celebrate ("Teamwork" 🤝).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompanyValue {
    pub id: Uuid,
    pub org_id: OrgId,
    pub name: String,
    pub emoji: String,
    pub created_at: OffsetDateTime,
}

/// A company value to register, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCompanyValue {
    pub name: String,
    pub emoji: String,
}

/// Recognition one person gave others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kudos {
    pub id: Uuid,
    pub org_id: OrgId,
    /// Who gave them. Stores always fill it; the service empties it when it shows anonymous
    /// kudos to anyone but their giver.
    pub giver: Option<User>,
    /// By name (first, last, id).
    pub receivers: Vec<User>,
    pub company_value: Option<CompanyValue>,
    pub content: String,
    pub is_anonymous: bool,
    /// Sent in the bot's name rather than the giver's (stored and shown; no rule depends on it).
    pub by_dailybot: bool,
    /// The people who added their +1, oldest first.
    pub boosted_by: Vec<User>,
    pub created_at: OffsetDateTime,
}

impl Kudos {
    /// The kudos as `viewer` may see them: the giver of anonymous kudos is hidden from
    /// everyone but the giver (`None`: a reader who is nobody in particular, such as an
    /// event subscriber).
    pub fn seen_by(mut self, viewer: Option<UserId>) -> Kudos {
        let own = self.giver.as_ref().is_some_and(|g| Some(g.id) == viewer);
        if self.is_anonymous && !own {
            self.giver = None;
        }
        self
    }
}

/// Which of the caller's kudos a list covers (`?filter=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KudosDirection {
    Received,
    Given,
}

impl WireEnum for KudosDirection {
    const NAME: &'static str = "KudosFilter";
    const ALL: &'static [Self] = &[KudosDirection::Received, KudosDirection::Given];

    fn as_str(self) -> &'static str {
        match self {
            KudosDirection::Received => "kudos_received",
            KudosDirection::Given => "kudos_given",
        }
    }
}

impl KudosDirection {
    /// `kudos_received` or `kudos_given`, in any case; anything else is `invalid_kudos_filter`
    /// (`extra.allowed` lists the names).
    pub fn parse(raw: &str) -> Result<Self, Error> {
        Self::from_name(&raw.trim().to_ascii_lowercase()).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidKudosFilter,
                format!("Not a valid kudos filter; use {}.", Self::names()),
            )
            .with_extra(
                "allowed",
                Self::ALL.iter().map(|d| d.as_str()).collect::<Vec<_>>(),
            )
        })
    }
}

/// One person's activity over a period, as the store counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonTally {
    pub person: User,
    /// Kudos received.
    pub received: u64,
    /// +1s added to the kudos received.
    pub plus: u64,
    /// Kudos given and signed (anonymous kudos never count for their giver: counting them
    /// would reveal who gave them).
    pub given: u64,
}

/// How many kudos of a period celebrated one company value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueTally {
    pub value: CompanyValue,
    pub count: u64,
}

/// Everything the wall of fame is computed from: the people with any activity in the period
/// and the company values celebrated in it (in no particular order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tallies {
    pub people: Vec<PersonTally>,
    pub values: Vec<ValueTally>,
}

/// A person at the top of one ranking, with their count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Champion {
    pub person: User,
    pub count: u64,
}

/// A row of the leaderboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// 1-based; people with the same score share a position ("1, 2, 2, 4").
    pub position: u64,
    pub person: User,
    /// Kudos received plus the +1s added to them.
    pub score: u64,
    pub received: u64,
    pub plus: u64,
}

/// One company value's share of the kudos that celebrated a value.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueShare {
    pub value: CompanyValue,
    pub count: u64,
    /// Of the kudos that celebrated a value, rounded to one decimal.
    pub percentage: f64,
}

/// The organization's kudos rankings over a period.
#[derive(Debug, Clone, PartialEq)]
pub struct WallOfFame {
    pub top_receiver: Option<Champion>,
    pub top_giver: Option<Champion>,
    /// The viewer's position on the leaderboard (`None` when they received nothing).
    pub viewer_position: Option<u64>,
    /// Everyone on the leaderboard.
    pub ranked: u64,
    /// Most celebrated first.
    pub dna: Vec<ValueShare>,
    /// The requested page of the leaderboard.
    pub leaderboard: Page<Standing>,
}
