package demo

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/mcp"
)

// Tools, resources and prompts a person would enjoy trying from an MCP
// client.

// CoinFlipOut is the result of coin_flip.
type CoinFlipOut struct {
	Side string `json:"side" jsonschema:"heads or tails"`
}

// DiceIn is the input of dice_roll.
type DiceIn struct {
	Count int `json:"count,omitempty" jsonschema:"how many dice to roll (1 to 100, default 1)"`
	Sides int `json:"sides,omitempty" jsonschema:"sides per die (2 to 1000, default 6)"`
}

// DiceOut is the result of dice_roll.
type DiceOut struct {
	Rolls []int `json:"rolls" jsonschema:"each die's roll"`
	Total int   `json:"total" jsonschema:"the sum of the rolls"`
}

// EvaluateIn is the input of evaluate.
type EvaluateIn struct {
	Expression string `json:"expression" jsonschema:"an arithmetic expression with numbers, + - * / %, parentheses and the functions sqrt, abs, pow, min, max"`
}

// CountdownIn is the input of countdown.
type CountdownIn struct {
	Seconds int `json:"seconds" jsonschema:"how many seconds to count down (1 to 60)"`
}

// TimeIn is the input of time_now.
type TimeIn struct {
	Timezone string `json:"timezone,omitempty" jsonschema:"an IANA time zone such as Europe/Paris (default UTC)"`
}

// WordCountOut is the result of word_count.
type WordCountOut struct {
	Words      int `json:"words"`
	Characters int `json:"characters"`
	Lines      int `json:"lines"`
}

// AddFun registers the tools, resources and prompts meant for people.
func AddFun(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "coin_flip", Description: "Flips a fair coin.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true)}},
		func(ctx context.Context, req *mcp.ToolRequest, in struct{}) (CoinFlipOut, error) {
			if rand.IntN(2) == 0 {
				return CoinFlipOut{"heads"}, nil
			}
			return CoinFlipOut{"tails"}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "dice_roll", Description: "Rolls dice: count dice with sides sides each (default one six-sided die)."},
		func(ctx context.Context, req *mcp.ToolRequest, in DiceIn) (DiceOut, error) {
			count, sides := max(in.Count, 1), in.Sides
			if sides == 0 {
				sides = 6
			}
			if count > 100 || sides < 2 || sides > 1000 {
				return DiceOut{}, fmt.Errorf("count must be 1 to 100 and sides 2 to 1000, got count %d and sides %d", in.Count, in.Sides)
			}
			out := DiceOut{Rolls: make([]int, count)}
			for i := range out.Rolls {
				out.Rolls[i] = 1 + rand.IntN(sides)
				out.Total += out.Rolls[i]
			}
			return out, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "evaluate", Description: "Evaluates an arithmetic expression, such as (2 + 3) * sqrt(16)."},
		func(ctx context.Context, req *mcp.ToolRequest, in EvaluateIn) (string, error) {
			v, err := evaluate(in.Expression)
			if err != nil {
				return "", err
			}
			return strconv.FormatFloat(v, 'g', -1, 64), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "countdown", Description: "Counts down the given number of seconds, reporting progress every second; cancel it to stop early."},
		func(ctx context.Context, req *mcp.ToolRequest, in CountdownIn) (string, error) {
			if in.Seconds < 1 || in.Seconds > 60 {
				return "", fmt.Errorf("seconds must be 1 to 60, got %d", in.Seconds)
			}
			for i := range in.Seconds {
				req.Progress(float64(i), float64(in.Seconds), fmt.Sprintf("%d seconds left", in.Seconds-i))
				if err := sleep(ctx, time.Second); err != nil {
					return "", err
				}
			}
			req.Progress(float64(in.Seconds), float64(in.Seconds), "liftoff")
			return "Liftoff!", nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "time_now", Description: "Tells the current time in a time zone (default UTC)."},
		func(ctx context.Context, req *mcp.ToolRequest, in TimeIn) (string, error) {
			loc := time.UTC
			if in.Timezone != "" {
				var err error
				if loc, err = time.LoadLocation(in.Timezone); err != nil {
					return "", fmt.Errorf("unknown time zone %q; use an IANA name such as Europe/Paris", in.Timezone)
				}
			}
			return time.Now().In(loc).Format("Monday, 2 January 2006, 15:04:05 MST"), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "word_count", Description: "Counts the words, characters and lines of a text."},
		func(ctx context.Context, req *mcp.ToolRequest, in EchoIn) (WordCountOut, error) {
			out := WordCountOut{Words: len(strings.Fields(in.Text)), Characters: len([]rune(in.Text))}
			if in.Text != "" {
				out.Lines = strings.Count(strings.TrimSuffix(in.Text, "\n"), "\n") + 1
			}
			return out, nil
		})

	s.AddResource(&mcp.Resource{
		URI: "demo://about", Name: "about", Title: "About this server",
		Description: "What this demo server offers.", MIMEType: "text/markdown",
	}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: about}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: "demo://times-table/{n}", Name: "times-table", Title: "Times table",
		Description: "The multiplication table of a whole number from 1 to 100.", MIMEType: "text/plain",
		Complete: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var out []string
			for n := 1; n <= 100; n++ {
				if v := strconv.Itoa(n); strings.HasPrefix(v, req.Value) {
					out = append(out, v)
				}
			}
			return &mcp.CompleteResult{Values: out}, nil
		},
	}, func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ReadResourceResult, error) {
		n, err := strconv.Atoi(req.Params["n"])
		if err != nil || n < 1 || n > 100 {
			return nil, mcp.ResourceNotFound(req.URI)
		}
		var b strings.Builder
		for i := 1; i <= 10; i++ {
			fmt.Fprintf(&b, "%d x %d = %d\n", i, n, i*n)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: b.String()}}}, nil
	})

	s.AddPrompt(&mcp.Prompt{
		Name:        "code_review",
		Title:       "Request a code review",
		Description: "Asks the model to review a piece of code.",
		Arguments: []mcp.PromptArgument{
			{Name: "code", Description: "The code to review", Required: true},
			{Name: "language", Description: "The code's programming language"},
		},
		Complete: mcp.CompleteFrom(map[string][]string{
			"language": {"Go", "Python", "Rust", "TypeScript", "JavaScript", "Java", "C", "C++", "Haskell", "Zig"},
		}),
	}, func(ctx context.Context, req *mcp.PromptRequest) (*mcp.GetPromptResult, error) {
		lang := req.Arguments["language"]
		if lang == "" {
			lang = "this"
		}
		return &mcp.GetPromptResult{
			Description: "Code review request",
			Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{
				Text: fmt.Sprintf("Please review %s code for correctness, clarity and performance:\n\n%s", lang, req.Arguments["code"]),
			}}},
		}, nil
	})
}

const about = `# mcpkit demo server

This server shows what an mcpkit server can do:

- **Tools**: echo, shout, coin_flip, dice_roll, evaluate, countdown (with
  progress), time_now, word_count, note and clear_notes (asks you to
  confirm, by elicitation), summarize (asks the client's model, by
  sampling), and the test_* fixtures of the MCP conformance suite.
- **Resources**: this page, demo://times-table/{n}, and test://... fixtures.
- **Prompts**: code_review, and the test_* fixtures.
`

func ptr[T any](v T) *T { return &v }

// evaluate computes an arithmetic expression parsed with Go's expression
// syntax.
func evaluate(expr string) (float64, error) {
	if len(expr) > 1000 {
		return 0, fmt.Errorf("the expression is too long (at most 1000 characters)")
	}
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return 0, fmt.Errorf("cannot parse %q: %v", expr, err)
	}
	return eval(e)
}

func eval(e ast.Expr) (float64, error) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.INT && e.Kind != token.FLOAT {
			return 0, fmt.Errorf("%s is not a number", e.Value)
		}
		return strconv.ParseFloat(e.Value, 64)
	case *ast.ParenExpr:
		return eval(e.X)
	case *ast.UnaryExpr:
		x, err := eval(e.X)
		switch {
		case err != nil:
			return 0, err
		case e.Op == token.SUB:
			return -x, nil
		case e.Op == token.ADD:
			return x, nil
		}
		return 0, fmt.Errorf("unsupported operator %s", e.Op)
	case *ast.BinaryExpr:
		x, err := eval(e.X)
		if err != nil {
			return 0, err
		}
		y, err := eval(e.Y)
		if err != nil {
			return 0, err
		}
		switch e.Op {
		case token.ADD:
			return x + y, nil
		case token.SUB:
			return x - y, nil
		case token.MUL:
			return x * y, nil
		case token.QUO:
			if y == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			return x / y, nil
		case token.REM:
			if y == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			return math.Mod(x, y), nil
		}
		return 0, fmt.Errorf("unsupported operator %s", e.Op)
	case *ast.CallExpr:
		id, ok := e.Fun.(*ast.Ident)
		if !ok {
			return 0, fmt.Errorf("unsupported function call")
		}
		args := make([]float64, len(e.Args))
		for i, a := range e.Args {
			v, err := eval(a)
			if err != nil {
				return 0, err
			}
			args[i] = v
		}
		want := map[string]int{"sqrt": 1, "abs": 1, "pow": 2, "min": 2, "max": 2}[id.Name]
		if want == 0 {
			return 0, fmt.Errorf("unknown function %s; use sqrt, abs, pow, min or max", id.Name)
		}
		if len(args) != want {
			return 0, fmt.Errorf("%s takes %d argument(s)", id.Name, want)
		}
		switch id.Name {
		case "sqrt":
			return math.Sqrt(args[0]), nil
		case "abs":
			return math.Abs(args[0]), nil
		case "pow":
			return math.Pow(args[0], args[1]), nil
		case "min":
			return math.Min(args[0], args[1]), nil
		default:
			return math.Max(args[0], args[1]), nil
		}
	case *ast.Ident:
		switch strings.ToLower(e.Name) {
		case "pi":
			return math.Pi, nil
		case "e":
			return math.E, nil
		}
		return 0, fmt.Errorf("unknown name %s", e.Name)
	}
	return 0, fmt.Errorf("unsupported expression; use numbers, + - * / %%, parentheses and sqrt, abs, pow, min, max")
}
