package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/rudder-operator/rudder/internal/shard"
)

// runShardOf prints the shard of --shards that owns each namespace named in
// args, then how many each shard got: a plan to check before deploying it.
func runShardOf(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("rudder shard-of", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	shards := fs.Int("shards", 0, "number of shards")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	if *shards < 2 {
		return errors.New("rudder shard-of: set --shards to the number of shards, 2 or more")
	}
	if fs.NArg() == 0 {
		return errors.New("rudder shard-of: name the namespaces, such as: rudder shard-of --shards 3 team-a team-b")
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	p := &printer{w: w}
	p.printf("NAMESPACE\tSHARD\n")
	counts := make([]int, *shards)
	for _, ns := range fs.Args() {
		s := shard.Of(ns, *shards)
		counts[s.Index]++
		p.printf("%s\t%d\n", ns, s.Index)
	}
	for i, n := range counts {
		p.printf("# shard %d\t%d namespace(s)\n", i, n)
	}
	if p.err != nil {
		return p.err
	}
	return w.Flush()
}
