package validate

// VerdictOnly makes [Validator.CheckDoc] of d give its verdict without
// locating a violation: a document the program decides is invalid gets an
// *Error with keyword [KeywordSchema] and no pointer, as a document over
// 16 KiB does, instead of the second pass over the document that names the
// pointer and keyword of the violation. Everything else CheckDoc reports
// (malformed JSON, a repeated member name, an unverified document, a
// context that ended) is unchanged, and so is every verdict. A caller that
// only answers whether a document is valid, and shows no details, calls
// it before the first CheckDoc; [Doc.Release] resets it.
func (d *Doc) VerdictOnly() { d.verdictOnly = true }
