package plan

import (
	"sort"

	"github.com/suitegen/suitegen/pkg/contract"
)

// Built-in vocabularies, used where a contract gives none. Names are dealt by
// index so that no two scenarios of a run share a caller (first × last is a
// bijection over the run's indices, see Person).
var (
	FirstNames = []string{
		"Aisha", "Bruno", "Chiara", "Dmitri", "Esi", "Farid", "Greta", "Hiroshi", "Ines", "Jamal",
		"Kavya", "Lars", "Mei", "Nikolai", "Olu", "Priya", "Quentin", "Rosa", "Sipho", "Tomasz",
		"Ulla", "Valentina", "Wen", "Ximena", "Yusuf", "Zainab", "Amara", "Bilal", "Camila", "Deniz",
		"Emeka", "Freya", "Gaurav", "Hana", "Ivan", "Jun", "Kofi", "Leila", "Mateo", "Nadia",
		"Oskar", "Paloma", "Rahul", "Sakura", "Tariq", "Uma", "Viktor", "Wanjiru", "Yara", "Zoltan",
		"Anders", "Beatriz", "Chidi", "Dalia", "Elif", "Fatima", "Goran", "Hye-jin", "Ibrahim", "Jana",
		"Kenji", "Luca", "Marisol", "Nuno", "Orla", "Pedro", "Rania", "Sven", "Thandiwe", "Uriel",
		"Vera", "Wiktor", "Xiu", "Yasmin", "Zeynep", "Adebayo", "Bianca", "Ciaran", "Daniela", "Eitan",
		"Farah", "Gustavo", "Helga", "Imani", "Joaquin", "Keiko", "Lorenzo", "Maryam", "Nils", "Omar",
		"Petra", "Rafael", "Selin", "Teodor", "Ugo", "Vanessa", "Wei", "Yael", "Zara", "Arjun",
	}
	LastNames = []string{
		"Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Kowalski", "Mensah", "Fernandes", "Novak", "Sato",
		"Adeyemi", "Bergstrom", "Castillo", "Dimitrov", "Eriksen", "Farouk", "Gallagher", "Horvath", "Iyer", "Jensen",
		"Kariuki", "Lombardi", "Mahlangu", "Nakamura", "Oyelaran", "Petrov", "Quispe", "Rossi", "Sandoval", "Takahashi",
		"Usman", "Vasquez", "Wojcik", "Xu", "Yilmaz", "Zhang", "Abara", "Baptiste", "Chen", "Duarte",
		"Esposito", "Fischer", "Gupta", "Hussain", "Ivanova", "Jovanovic", "Kim", "Lefebvre", "Mbeki", "Nguyen",
		"Olsen", "Park", "Reyes", "Schmidt", "Tran", "Urquhart", "Varga", "Walsh", "Yamamoto", "Zielinski",
		"Achebe", "Brennan", "Cruz", "Das", "Ekström", "Fontaine", "Greco", "Hakimi", "Ito", "Jaramillo",
		"Kapoor", "Laine", "Molina", "Nowak", "Ortega", "Pillai", "Ramos", "Sokolov", "Toure", "Vidal",
		"Weber", "Yadav", "Zapata", "Alvarez", "Bauer", "Coelho", "Diallo", "Eze", "Fraser", "Gomez",
		"Hoang", "Ibarra", "Jung", "Koch", "Lopez", "Murphy", "Nair", "Osei", "Patel",
	}
	Personalities = []string{
		"Impatient and direct", "Anxious and apologetic", "Cheerful and chatty", "Skeptical and precise",
		"Tired and terse", "Confused but polite", "Demanding and formal", "Warm and rambling",
		"Matter-of-fact", "Frustrated after earlier attempts",
	}
	Accents = []string{
		"Indian", "Scottish", "Nigerian", "Texan", "Irish", "Australian", "Filipino", "Brazilian",
		"German", "Jamaican", "Mexican", "South African",
	}
	Styles = []string{
		"Formal and polite", "Casual", "Brief, one sentence at a time", "Detailed storyteller",
		"Asks many questions", "Reads everything back to confirm",
	}
	Locations = []string{
		"Leeds", "Pune", "Lagos", "Austin", "Cork", "Brisbane", "Manila", "Recife", "Hamburg",
		"Kingston", "Guadalajara", "Durban", "Toronto", "Osaka", "Nairobi", "Lyon",
	}
	// What a phone line adds, dealt to voice agents' scenarios.
	LineQualities = []string{
		"Clear line", "Weak mobile signal", "Speakerphone with an echo", "Car hands-free with road noise",
		"Breaking up now and then", "Crackly old landline",
	}
	BackgroundNoises = []string{
		"Quiet room", "Television in the background", "Children nearby", "Street traffic",
		"Busy office", "Wind", "Music playing",
	}
	Spellings = []string{
		"Spells names letter by letter", "Reads codes digit by digit", "Groups digits in pairs",
		"Uses words for letters (B as in Bravo)", "Says numbers as words", "Gives codes in one rush",
	}
)

// TalksOverEvery: one person in this many speaks over the agent.
const TalksOverEvery = 3

// Persona is the caller dealt to one scenario index. The phone fields
// (LineQuality, BackgroundNoise, TalksOver, Spelling) are dealt to every
// index; writers use them for voice agents.
type Persona struct {
	First, Last, Personality, Accent, Style, Location string
	LineQuality, BackgroundNoise, Spelling            string
	TalksOver                                         bool
}

// Person deals the caller of the i-th scenario of a run. Names: first and last
// are chosen so distinct indices below len(first)*len(last) give distinct
// pairs; traits rotate with coprime strides so each is spread evenly.
func Person(c *contract.Contract, i int) Persona {
	if i < 0 {
		i = -i
	}
	nf, nl := len(FirstNames), len(LastNames)
	q := i / nf
	p := Persona{
		First: FirstNames[i%nf],
		// q determines the pair with i%nf; (q*(nf+1)+i%nf) mod nl is injective in q<nl when gcd(nf+1,nl)=1.
		Last: LastNames[(q*(nf+1)+i%nf)%nl],
	}
	pick := func(own, builtin []string, stride int) string {
		v := builtin
		if len(own) > 0 {
			v = own
		}
		return v[(i*stride)%len(v)]
	}
	p.Personality = pick(c.Personas.Personalities, Personalities, 1)
	p.Accent = pick(c.Personas.Accents, Accents, 1)
	p.Style = pick(c.Personas.Styles, Styles, 1)
	p.Location = pick(c.Personas.Locations, Locations, 1)
	p.LineQuality = pick(c.Personas.LineQualities, LineQualities, 1)
	p.BackgroundNoise = pick(c.Personas.BackgroundNoises, BackgroundNoises, 1)
	p.Spelling = pick(c.Personas.Spellings, Spellings, 1)
	p.TalksOver = i%TalksOverEvery == TalksOverEvery-1
	return p
}

// Noisier is per on the worst phone line: the harshest line quality and
// the loudest background noise of the contract's lists (or the builtin
// ones), speaking over the agent: no caller of the suite is on a worse
// one. Lists run from clearest to harshest, a contract's own as its author
// ordered them.
func Noisier(c *contract.Contract, per Persona) Persona {
	lines, noises := LineQualities, BackgroundNoises
	if len(c.Personas.LineQualities) > 0 {
		lines = c.Personas.LineQualities
	}
	if len(c.Personas.BackgroundNoises) > 0 {
		noises = c.Personas.BackgroundNoises
	}
	per.LineQuality, per.BackgroundNoise, per.TalksOver = lines[len(lines)-1], noises[len(noises)-1], true
	return per
}

// Spread is the caller spread dealt to a slice: name initials, code prefixes
// and the traits its scenarios start from.
type Spread struct {
	Initials      []string `json:"initials"`
	CodePrefixes  []string `json:"code_prefixes"`
	Personalities []string `json:"personalities"`
	Accents       []string `json:"accents"`
	Styles        []string `json:"styles"`
	Locations     []string `json:"locations"`
	// Voice agents only: the phone fields, and how many of the slice's
	// callers speak over the agent.
	LineQualities    []string `json:"line_qualities,omitempty"`
	BackgroundNoises []string `json:"background_noises,omitempty"`
	Spellings        []string `json:"spellings,omitempty"`
	TalkOver         int      `json:"talk_over,omitempty"`
}

// SpreadFor deals the spread of the scenario indices a slice will write.
func SpreadFor(c *contract.Contract, indices []int) Spread {
	var s Spread
	seen := map[string]map[string]bool{}
	addTo := func(kind string, list *[]string, v string) {
		if seen[kind] == nil {
			seen[kind] = map[string]bool{}
		}
		if !seen[kind][v] {
			seen[kind][v] = true
			*list = append(*list, v)
		}
	}
	for _, i := range indices {
		p := Person(c, i)
		addTo("i", &s.Initials, p.First[:1]+p.Last[:1])
		addTo("c", &s.CodePrefixes, Number(i))
		addTo("p", &s.Personalities, p.Personality)
		addTo("a", &s.Accents, p.Accent)
		addTo("s", &s.Styles, p.Style)
		addTo("l", &s.Locations, p.Location)
		if c.Modality == "voice" {
			addTo("q", &s.LineQualities, p.LineQuality)
			addTo("n", &s.BackgroundNoises, p.BackgroundNoise)
			addTo("sp", &s.Spellings, p.Spelling)
			if p.TalksOver {
				s.TalkOver++
			}
		}
	}
	sort.Strings(s.CodePrefixes)
	return s
}

// Number is the numeric prefix of codes minted for the i-th scenario.
func Number(i int) string {
	return itoa(7000 + i)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	j := len(b)
	for n > 0 {
		j--
		b[j] = byte('0' + n%10)
		n /= 10
	}
	return string(b[j:])
}
