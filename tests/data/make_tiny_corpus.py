"""Write a tiny ETC corpus in the real schema: 8 dialogues (5 train, 1 valid, 2 test).

Texts are short Japanese sentences made from a few templates, so tests can predict exact matches.
"""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = ["旅行", "仕事", "試験", "料理", "映画", "引っ越し", "誕生日", "犬"]
EMOTIONS = ["喜び", "悲しみ", "恐怖", "怒り", "驚き", "嫌悪", "該当なし"]
SPLIT = {"train": [1, 2, 3, 4, 5], "valid": [6], "test": [7, 8]}
PEOPLE = ["AA", "AB", "AC", "AD"]


def dialogue(i: int) -> dict:
    topic = TOPICS[(i - 1) % len(TOPICS)]
    turns = []
    for t in range(1, 6):
        for role in ("speaker", "listener"):
            e = EMOTIONS[(i + t + (role == "listener")) % len(EMOTIONS)]
            other = EMOTIONS[(i + t + 3) % len(EMOTIONS)]
            turns.append(
                {
                    "turn": t,
                    "role": role,
                    "utterance": f"{topic}の話{i}の{t}番目です。{'私は' if role == 'speaker' else 'あなたは'}どう思いますか？",
                    "emotion_transcription": f"{topic}について{t}回目に{'話したくて' if role == 'speaker' else '共感したくて'}嬉しかった{i}",
                    "emotions": [[e], [e] if t % 2 else [other], [other]],
                }
            )
    return {
        "dialogue_id": i,
        "dialogue_emotion": "感動する" if i % 2 else "がっかりする",
        "participants": {"speaker": PEOPLE[i % 4], "listener": PEOPLE[(i + 1) % 4]},
        "dialogue": turns,
    }


def write_tiny_corpus(root: Path) -> Path:
    (root / "dialogues").mkdir(parents=True, exist_ok=True)
    for ids in SPLIT.values():
        for i in ids:
            (root / "dialogues" / f"{i:04d}.json").write_text(
                json.dumps(dialogue(i), ensure_ascii=False, indent=1), encoding="utf-8"
            )
    split = {k: [f"{i:04d}.json" for i in v] for k, v in SPLIT.items()}
    (root / "split.json").write_text(json.dumps(split), encoding="utf-8")
    traits = {
        "item": {f"i{n:02d}": f"質問{n}" for n in range(1, 11)},
        "personality": {
            p: {
                "participant_id": p,
                "response": {f"i{n:02d}": "4. どちらでもない" for n in range(1, 11)},
                "score": {
                    "openness": 2 + k,
                    "conscientiousness": 8,
                    "extraversion": 14 - k,
                    "agreeableness": 7,
                    "neuroticism": 5 + k,
                },
            }
            for k, p in enumerate(PEOPLE)
        },
    }
    (root / "personality_traits.json").write_text(
        json.dumps(traits, ensure_ascii=False), encoding="utf-8"
    )
    return root
