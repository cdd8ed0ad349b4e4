//! The size expressions of `membench kernel`'s flags: whole numbers, size variables,
//! `+ - * /`, `^` (power) and parentheses, evaluated in `u64`. Division is exact (an
//! inexact one is an error naming the expression), or rounds up where a count of
//! workgroups is asked for ([`Division::Up`]).

use std::collections::BTreeMap;

/// Size variables by name: `--size`, and the `--axis` value of a row.
pub(crate) type Vars = BTreeMap<String, u64>;

/// How `/` divides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Division {
    /// The quotient must be whole: `n/3` with `n = 10` is an error.
    Exact,
    /// Rounded up: the workgroups that cover a size.
    Up,
}

/// Evaluates `text` with `vars`; an error names the expression and what is wrong.
pub(crate) fn eval(text: &str, vars: &Vars, division: Division) -> Result<u64, String> {
    let tokens = tokens(text).map_err(|why| format!("`{text}`: {why}"))?;
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        vars,
        division,
    };
    let value = parser.sum().map_err(|why| format!("`{text}`: {why}"))?;
    match parser.tokens.get(parser.at) {
        None => Ok(value),
        Some(token) => Err(format!("`{text}`: unexpected {token}")),
    }
}

/// The variables `text` names, in order, each once.
#[cfg(test)]
pub(crate) fn names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for token in tokens(text).unwrap_or_default() {
        if let Token::Name(name) = token
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Number(u64),
    Name(String),
    Op(char),
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Token::Number(n) => write!(f, "`{n}`"),
            Token::Name(name) => write!(f, "`{name}`"),
            Token::Op(op) => write!(f, "`{op}`"),
        }
    }
}

fn tokens(text: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_digit() {
            let mut digits = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_alphanumeric()) {
                digits.push(d);
                chars.next();
            }
            let n = digits
                .parse()
                .map_err(|_| format!("`{digits}` is not a whole number"))?;
            tokens.push(Token::Number(n));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut name = String::new();
            while let Some(&d) = chars
                .peek()
                .filter(|d| d.is_ascii_alphanumeric() || **d == '_')
            {
                name.push(d);
                chars.next();
            }
            tokens.push(Token::Name(name));
        } else if "+-*/^()".contains(c) {
            tokens.push(Token::Op(c));
            chars.next();
        } else {
            return Err(format!("unexpected `{}`", c.escape_debug()));
        }
    }
    if tokens.is_empty() {
        return Err("empty expression".to_owned());
    }
    Ok(tokens)
}

/// A recursive-descent parser that evaluates as it goes: sum → product → power → atom.
struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    vars: &'a Vars,
    division: Division,
}

impl Parser<'_> {
    fn next_op(&mut self, ops: &str) -> Option<char> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) if ops.contains(*op) => {
                self.at += 1;
                Some(*op)
            }
            _ => None,
        }
    }

    fn sum(&mut self) -> Result<u64, String> {
        let mut value = self.product()?;
        while let Some(op) = self.next_op("+-") {
            let right = self.product()?;
            value = match op {
                '+' => value.checked_add(right).ok_or("overflows 64 bits")?,
                _ => value
                    .checked_sub(right)
                    .ok_or_else(|| format!("{value} - {right} is negative"))?,
            };
        }
        Ok(value)
    }

    fn product(&mut self) -> Result<u64, String> {
        let mut value = self.power()?;
        while let Some(op) = self.next_op("*/") {
            let right = self.power()?;
            value = match op {
                '*' => value.checked_mul(right).ok_or("overflows 64 bits")?,
                _ if right == 0 => return Err(format!("{value} / 0")),
                _ if self.division == Division::Up => value.div_ceil(right),
                _ if value % right != 0 => {
                    return Err(format!("{value} / {right} is not a whole number"));
                }
                _ => value / right,
            };
        }
        Ok(value)
    }

    /// `^` binds tighter than `*` and to the right: `2^3^2` is `2^9`.
    fn power(&mut self) -> Result<u64, String> {
        let base = self.atom()?;
        if self.next_op("^").is_none() {
            return Ok(base);
        }
        let exponent = self.power()?;
        u32::try_from(exponent)
            .ok()
            .and_then(|e| base.checked_pow(e))
            .ok_or_else(|| format!("{base}^{exponent} overflows 64 bits"))
    }

    fn atom(&mut self) -> Result<u64, String> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        match token {
            Some(Token::Number(n)) => Ok(n),
            Some(Token::Name(name)) => self.vars.get(&name).copied().ok_or_else(|| {
                format!("no size `{name}` (give it with --size {name}=EXPR or --axis)")
            }),
            Some(Token::Op('(')) => {
                let value = self.sum()?;
                match self.next_op(")") {
                    Some(_) => Ok(value),
                    None => Err("a `(` is not closed".to_owned()),
                }
            }
            Some(token) => Err(format!("unexpected {token}")),
            None => Err("ends too soon".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        [("n".to_owned(), 1 << 24), ("D".to_owned(), 768)].into()
    }

    #[test]
    fn expressions_evaluate_with_precedence_and_variables() {
        let exact = |text| eval(text, &vars(), Division::Exact);
        assert_eq!(exact("2^24"), Ok(1 << 24));
        assert_eq!(exact("n/256"), Ok(65536));
        assert_eq!(exact("2 + 3 * 4"), Ok(14));
        assert_eq!(exact("(2 + 3) * 4"), Ok(20));
        assert_eq!(exact("2^3^2"), Ok(512));
        assert_eq!(exact("D*4 - 1"), Ok(3071));
        assert_eq!(names("n * D + n"), ["n", "D"]);
    }

    #[test]
    fn division_is_exact_except_for_workgroups_where_it_rounds_up() {
        let error = eval("D/5", &vars(), Division::Exact).unwrap_err();
        assert_eq!(error, "`D/5`: 768 / 5 is not a whole number");
        assert_eq!(eval("D/5", &vars(), Division::Up), Ok(154));
        assert_eq!(eval("D/256", &vars(), Division::Up), Ok(3));
    }

    #[test]
    fn bad_expressions_say_what_is_wrong() {
        let error = |text| eval(text, &vars(), Division::Exact).unwrap_err();
        assert_eq!(
            error("m*2"),
            "`m*2`: no size `m` (give it with --size m=EXPR or --axis)"
        );
        assert_eq!(error("n/0"), "`n/0`: 16777216 / 0");
        assert_eq!(error("2^64"), "`2^64`: 2^64 overflows 64 bits");
        assert_eq!(error("1 - 2"), "`1 - 2`: 1 - 2 is negative");
        assert_eq!(error("(1 + 2"), "`(1 + 2`: a `(` is not closed");
        assert_eq!(error("1 +"), "`1 +`: ends too soon");
        assert_eq!(error("1 2"), "`1 2`: unexpected `2`");
        assert_eq!(error("1.5"), "`1.5`: unexpected `.`");
        assert_eq!(error("12k"), "`12k`: `12k` is not a whole number");
        assert_eq!(error(""), "``: empty expression");
    }
}
