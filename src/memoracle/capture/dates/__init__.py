"""Time expressions in a text -> absolute date ranges, anchored at the turn's time.

Owns the grammar of dates for capture: relative days ("yesterday", "позавчера"), shifts
("3 days ago", "dans deux semaines"), weekdays ("last Friday", "el viernes"), periods
("next week", "в прошлом месяце"), parts of day ("tonight", "ce soir"), clock times
("tomorrow at 5"), absolute dates ("2023-05-08", "8 мая 2023", "8/5/23") and days of
the month alone ("on the 17th"). The words are data, one file per language in
`language/rules/timewords/<lang>.toml`; this module holds the grammar they share and the
numeric forms that need no words. Which memory a date belongs to is the pipeline's
business; storing it is the store's.

Choices callers can rely on (relative to the anchor, in the anchor's timezone):

- Weeks start on Monday; "this/last/next week" is the whole week.
- "N days/weeks ago", "in N days/weeks" give one day (a week is 7 days: people say "in
  two weeks" for a date). "N months/years" give that calendar month/year, "N hours" that
  clock hour. "a couple of" is 2; "a few", "several", "quelques", "несколько", "unos" are
  3 (a point estimate; the matched text shows the vagueness).
- "this Friday" is the Friday of this week. "next/last Friday" is, for the words listed
  in [modifiers].calendar_week (en "next", "last"; ru "следующую", "прошлую"), the
  Friday of next/last week: "next Tuesday" said on a Monday is eight days away. Other
  modifiers (en "this coming", fr "vendredi prochain", es "el próximo viernes") give the
  first Friday after / the latest before today.
- A bare "Friday" / "on Friday" follows the tense cue nearest to it in its sentence
  ([tense] in the data: "was", "-ed", Russian "-л/-ла/-ли", French passé composé, Spanish
  preterite; "will", "going", "-rá"...): past gives the latest Friday before today,
  anything else (no cue included) the first one after today. Today's own weekday is
  never meant: people call it "today". A change of date or a plan right before it
  ([change] in the data: "moved to", "pushed the call to", "is on", "перенесли на",
  "déplacée à", "se movió al", "es el") makes it the first one after today whatever
  the tense: "the meeting was moved to Thursday" said on a Friday is next Thursday.
- "in May" / "в мае" / "en mai" with no year is May of the anchor's year, and so is
  "May 8". "last May" is the most recent May before this month, "next May" the first May
  after it. A bare year needs a preposition or a year word ("in 2021", "2021 год").
- A day of the month without its month ("on the 17th", "17-го", "le 17", "el día 17") is
  the next such day on or after the anchor's day, skipping months that lack it: "the
  31st" said on 5 April is 31 May. Only the forms in [day_of_month] count, and only
  before the end, punctuation or a listed word ("the 17th floor" is no date); "Friday
  the 13th" is the next 13th that is a Friday.
- Parts of day: morning 06-12, afternoon 12-18, evening 18-24, night 18-06 (next day).
  "tonight" said before 06:00 is the night under way.
- A bare hour 1-7 (no am/pm, no part of day, no leading zero) is in the afternoon:
  "tomorrow at 5" is 17:00 ([time].bare_pm_hours). A time spans one hour, or one minute
  when minutes are given. A time with no day ("at 5pm", "a las 5") is on the anchor's
  day; "at 5" alone is no time at all.
- Numeric dates: `day_first` decides 8/5/2023, an impossible reading (13/05) swaps, and
  two-digit years are 20yy. Day and month without a year ("8/5", "08.05") are never
  dates: they are scores, ratios and versions too often.
- Words that are also ordinary words (en "May", "March", "Sat") count only capitalised;
  month and weekday short forms need a day number, a year or a modifier.
- Mentions never overlap and the longest match wins; adjacent pieces join ("tomorrow
  morning", "Friday at 5pm", "вчера вечером", "mañana por la mañana") and the rule name
  joins theirs with "+".

The parts: `words` (time words as data), `words_file` (a words file read and checked),
`resolve` (a match to a date range), `grammar` (rules and matching), `find`
(`find_dates` over the packaged words).
"""

from memoracle.capture.dates.find import find_dates
from memoracle.capture.dates.words import FALLBACK_LANG, TimeWords
from memoracle.capture.dates.words_file import parse_timewords, timewords_from

__all__ = [
    "FALLBACK_LANG",
    "TimeWords",
    "find_dates",
    "parse_timewords",
    "timewords_from",
]
