"""Generate snowpy's demo corpus: support tickets routed to five queues.

Every phrase below was written for snowpy; nothing is taken from any other
corpus. Tickets combine a greeting, one to three statements of the queue's
problem (the last three statements of each queue appear only in the test
split) (with product names, amounts and dates filled in), sometimes a
detail shared by several queues, and a closing. Greetings, closings and
some words ("charge", "order", "account", "update") are shared between
queues, so the task is not trivially separable.

Run ``python corpora/demo/generate.py`` to rewrite ``train.tsv``,
``test.tsv`` and ``MANIFEST.json`` (deterministic: seed 20261122).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

SEED = 20261122
HERE = Path(__file__).resolve().parent
PER_QUEUE = {"train": 80, "test": 24}
HELD_OUT = 3

PRODUCTS = ["Lumen desk lamp", "Koru kettle", "Aster headphones", "Tidal water bottle",
            "Brisk running shoes", "Halcyon duvet", "Quill notebook set", "Orbit smart speaker",
            "Fathom backpack", "Ember space heater", "Sprig herb planter", "Nimbus umbrella"]
CITIES = ["Leeds", "Porto", "Ghent", "Tartu", "Cork", "Lyon", "Bergen", "Graz", "Malmo"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the weekend", "yesterday",
        "last week", "three days ago"]

GREETINGS = ["Hello,", "Hi there,", "Good morning,", "Hi team,", "Dear support,", "Hey,",
             "To whom it may concern,", "", "", "Hello again,"]
CLOSINGS = ["Thanks.", "Thank you for your help.", "Kind regards, Sam", "Cheers, Priya",
            "Please get back to me soon.", "Many thanks, Tomasz", "", "Best, Ines",
            "Looking forward to hearing from you.", "Regards, Olu"]
SHARED = ["My order number is {order}.", "I have been a customer for years.",
          "This is the second time I am writing about this.",
          "I attached a screenshot to this message.", "I tried calling but nobody answered.",
          "Can someone update me today?", "My account email is the one I am writing from."]

QUEUES = {
    "billing": [
        "I was charged twice for the {product} on {day}.",
        "My card statement shows a payment of {amount} that I do not recognise.",
        "The invoice for order {order} lists the wrong VAT number.",
        "I cancelled my subscription but you still took {amount} this month.",
        "Could you send me a receipt for my last purchase? I need it for my expenses.",
        "The discount code SPRING did not apply and I paid full price.",
        "I would like a refund of {amount} for the {product} I returned.",
        "Why did the price change between my basket and the checkout?",
        "Your payment page declined my card although my bank says it is fine.",
        "Please change the billing address on my invoices to our new office in {city}.",
        "I was billed in euros instead of pounds and lost money on the conversion.",
        "The instalment plan charged the full amount at once.",
        "My refund was approved on {day} but the money has not arrived.",
        "There is a late fee on my account that I do not understand.",
        "Can I pay by bank transfer instead of card for the annual plan?",
    ],
    "shipping": [
        "My parcel with the {product} has not arrived and tracking stopped in {city}.",
        "The courier marked order {order} as delivered but nothing came.",
        "The box arrived crushed and the {product} inside is damaged.",
        "Can you ship to {city}? The checkout does not list my country.",
        "I need to change the delivery address before the order leaves the warehouse.",
        "Tracking has said 'in transit' since {day}.",
        "The delivery slot I chose was ignored and the driver came at night.",
        "Only one of the two items in order {order} was in the package.",
        "How long does express delivery take to {city}?",
        "I was asked to pay a customs charge of {amount} on delivery; is that right?",
        "The parcel was left at a neighbour's house without a note.",
        "Could the courier collect the return from my door instead of a drop-off point?",
        "My order shows 'awaiting dispatch' for a week now.",
        "The wrong {product} was delivered; I ordered a different colour.",
        "Is there a way to hold my delivery at the depot in {city}?",
    ],
    "technical": [
        "The {product} will not turn on after the latest firmware update.",
        "The app crashes every time I open the settings page.",
        "My {product} keeps disconnecting from the wifi after a few minutes.",
        "Pairing over bluetooth fails with error code E42.",
        "The battery of the {product} drains in two hours instead of ten.",
        "After resetting the device the lights blink red and nothing else happens.",
        "The companion app does not show my device even though it is plugged in.",
        "Voice commands stopped working on {day}.",
        "The {product} makes a clicking noise when it heats up.",
        "Is there a manual for connecting two speakers in the same room?",
        "The touch controls respond late or not at all.",
        "The screen shows a spinning wheel and the update never finishes.",
        "The timer on the {product} resets itself at midnight.",
        "The charging cable gets very hot; is that normal?",
        "Which version of the app supports the new sleep mode?",
    ],
    "account": [
        "I cannot log in; the password reset email never arrives.",
        "Please delete my account and all the data you hold about me.",
        "Someone changed the email address on my account without my permission.",
        "How do I turn on two-factor authentication?",
        "I have two accounts by mistake; can you merge them?",
        "My account was locked after too many login attempts.",
        "I want to change the name on my profile after getting married.",
        "Please unsubscribe me from the marketing newsletters.",
        "The verification code by text message does not come through.",
        "Can I share my membership with my partner in {city}?",
        "I forgot which email address I used to sign up.",
        "Please send me a copy of the personal data linked to my account.",
        "My loyalty points disappeared from my profile on {day}.",
        "The app logs me out every time I close it.",
        "How can I update my phone number without access to the old one?",
    ],
    "feedback": [
        "I just wanted to say the {product} is the best thing I bought this year.",
        "Your support agent Ana was patient and solved my problem quickly, thank you.",
        "It would be great if the {product} came in more colours.",
        "The new website is harder to navigate than the old one.",
        "Please consider plastic-free packaging; the parcel had far too much wrapping.",
        "I love the design but the instructions could be clearer.",
        "Could you open a shop in {city}? I would visit every week.",
        "The recipe cards that came with the {product} were a lovely surprise.",
        "Suggestion: let us choose a delivery day at checkout.",
        "I am disappointed that the {product} was discontinued; please bring it back.",
        "The quality of the {product} has gone down compared to the previous model.",
        "Brilliant service from start to finish, I will recommend you to friends.",
        "A dark mode in the app would be easier on the eyes.",
        "The survey you sent me was far too long to finish.",
        "Keep up the good work, the team in {city} was really friendly.",
    ],
}


def ticket(queue: str, rng: random.Random, split: str) -> str:
    slots = {"product": rng.choice(PRODUCTS), "city": rng.choice(CITIES),
             "day": rng.choice(DAYS), "order": f"{rng.randint(100000, 999999)}",
             "amount": rng.choice(["£", "€", "$"]) + f"{rng.randint(5, 480)}.{rng.randint(0, 99):02d}"}
    # the last three statements of each queue appear only in test tickets
    pool = QUEUES[queue] if split == "test" else QUEUES[queue][:-HELD_OUT]
    statements = rng.sample(pool, k=rng.choice([1, 1, 2, 2, 3]))
    parts = [rng.choice(GREETINGS)] + [s.format(**slots) for s in statements]
    if rng.random() < 0.4:
        parts.append(rng.choice(SHARED).format(**slots))
    parts.append(rng.choice(CLOSINGS))
    return " ".join(p for p in parts if p)


def main() -> None:
    rng = random.Random(SEED)
    manifest = {
        "name": "snowpy-demo-support-tickets",
        "description": "Customer support tickets to route to one of five queues. Written for "
                       "snowpy: every phrase is original; generated by generate.py.",
        "license": "CC0-1.0 (public domain dedication by the snowpy developers)",
        "format": "label<TAB>text, UTF-8, one ticket per line",
        "labels": sorted(QUEUES),
        "generator": "corpora/demo/generate.py",
        "seed": SEED,
        "files": {},
    }
    for split, count in PER_QUEUE.items():
        rows = [(queue, ticket(queue, rng, split)) for queue in QUEUES for _ in range(count)]
        rng.shuffle(rows)
        text = "".join(f"{queue}\t{body}\n" for queue, body in rows)
        path = HERE / f"{split}.tsv"
        path.write_text(text, encoding="utf-8")
        manifest["files"][f"{split}.tsv"] = {
            "documents": len(rows),
            "per_label": count,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        }
    (HERE / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
