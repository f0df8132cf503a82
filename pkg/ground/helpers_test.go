package ground

import "regexp"

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
