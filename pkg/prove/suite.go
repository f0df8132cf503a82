package prove

import "fmt"

// Admit is the suite gate's look at a proved scenario's bucket: it must be
// one of the slice's (known) and still short of its want. Nil admits it.
func Admit(bucket string, known bool, have, want int) *Refusal {
	switch {
	case !known:
		return &Refusal{Gate: GateSuite, Code: CodeUnknownBucket, Message: fmt.Sprintf("bucket %q is not one of this slice's buckets", bucket)}
	case have >= want:
		return &Refusal{Gate: GateSuite, Code: CodeBucketFull, Message: fmt.Sprintf("bucket %s already has its %d scenarios", bucket, want)}
	}
	return nil
}

// Conflict is the suite gate's refusal of a scenario the ledger holds in
// another form; kind is what clashes: name, branch, content or code.
func Conflict(kind, message string) Refusal {
	code := map[string]Code{"name": CodeDuplicateName, "branch": CodeDuplicateBranch, "content": CodeDuplicateContent, "code": CodeDuplicateCode}[kind]
	if code == "" {
		code = CodeDuplicateContent
	}
	return Refusal{Gate: GateSuite, Code: code, Message: message}
}
