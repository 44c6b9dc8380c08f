"""Fill the fields of a PDF form from a JSON object (a demo script)."""
import json
import sys


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        print("fields of", argv[2], "would be listed here")
        return 0
    if len(argv) != 4:
        print("usage: fill_form.py input.pdf values.json output.pdf", file=sys.stderr)
        return 2
    with open(argv[2]) as f:
        values = json.load(f)
    print("would fill", len(values), "fields of", argv[1], "into", argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
