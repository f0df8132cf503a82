package plan

import "sort"

// Open is a bucket's standing as the ledger tells it.
type Open struct {
	ID, Theme, Cell string
	Ord             int
	Outstanding     int // want - done
	// ThemeUntouched is the share (0..1) of its theme's buckets with nothing done yet.
	ThemeUntouched float64
}

// Rank orders open buckets: outstanding work × (1 + share of its theme
// untouched), ids breaking ties.
func Rank(open []Open) []Open {
	out := append([]Open(nil), open...)
	sort.SliceStable(out, func(i, j int) bool {
		si := float64(out[i].Outstanding) * (1 + out[i].ThemeUntouched)
		sj := float64(out[j].Outstanding) * (1 + out[j].ThemeUntouched)
		if si != sj {
			return si > sj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Deal groups ranked buckets into slices of at most per buckets (and at most
// maxScenarios outstanding scenarios), never two from one cell. Every bucket
// lands in exactly one slice.
func Deal(ranked []Open, per, maxScenarios int) [][]Open {
	if per <= 0 {
		per = 3
	}
	if maxScenarios <= 0 {
		maxScenarios = 12
	}
	var slices [][]Open
	var cells []map[string]bool
	var sizes []int
	for _, b := range ranked {
		placed := false
		for i := range slices {
			if len(slices[i]) < per && !cells[i][b.Cell] && sizes[i]+b.Outstanding <= maxScenarios {
				slices[i] = append(slices[i], b)
				cells[i][b.Cell] = true
				sizes[i] += b.Outstanding
				placed = true
				break
			}
		}
		if !placed {
			slices = append(slices, []Open{b})
			cells = append(cells, map[string]bool{b.Cell: true})
			sizes = append(sizes, b.Outstanding)
		}
	}
	return slices
}
