"""Seeded synthetic data: a small bilingual CRM table and a large benchmark person table.

`customers()` builds a Korean/English customer table with labelled duplicates (typos, nicknames,
format variants, blanks, moves) and lookalikes that are *not* duplicates (relatives, namesakes,
twins), so that a dedupe tool is tested on both recall and precision.

`persons()` builds an English-style person table of any size with numpy array operations only, so
that a million rows take seconds; it is meant for benchmarks, not for realism in every detail.

`transactions()` builds purchase rows with no transaction id, where rows identical on the
business columns are either real repeat purchases or ingestion double loads; `labelled_texts()`
builds a labelled Korean/English text set with exact and near duplicates, conflicting labels and
statute quotes that are meant to repeat. Both test the guards around deduplication.

All draw every random number from `numpy.random.default_rng(seed)`, so one seed gives one table.
All name lists below were written for this module; none comes from an external package.

Regenerate the committed samples with ``python -m linkage.synth --out sample_data``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CUSTOMER_COLUMNS",
    "DATASETS",
    "PERSON_COLUMNS",
    "PROTECTED_QUOTES",
    "TEXT_COLUMNS",
    "TEXT_LABELS",
    "TRANSACTION_COLUMNS",
    "TRANSACTION_KEY",
    "TRAPS",
    "answer",
    "csv_text",
    "customer_updates",
    "customers",
    "labelled_texts",
    "main",
    "normalize_text",
    "persons",
    "summary",
    "transactions",
    "traps",
    "write_customer_updates",
    "write_customers",
    "write_households",
    "write_labelled_texts",
    "write_link",
    "write_transactions",
]

CUSTOMER_COLUMNS = [
    "customer_id",
    "name",
    "birth_date",
    "phone",
    "email",
    "company",
    "address",
    "postcode",
    "city",
    "source",
    "signup_date",
]
PERSON_COLUMNS = ["rec_id", "first_name", "surname", "dob", "city", "postcode", "email", "phone"]

# --------------------------------------------------------------------------------------------
# Name lists
# --------------------------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Split a block of white-space separated words (keeps the long lists below compact)."""
    return text.split()


# surname:romanisation:share in percent (rounded census shares, so 김 and 이 dominate).
_KO_SURNAME_TEXT = """
김:kim:21.5 이:lee:14.7 박:park:8.4 최:choi:4.7 정:jung:4.3 강:kang:2.3 조:cho:2.1 윤:yoon:2.1
장:jang:2.0 임:lim:1.7 한:han:1.5 오:oh:1.5 서:seo:1.5 신:shin:1.4 권:kwon:1.4 황:hwang:1.4
안:ahn:1.4 송:song:1.3 류:ryu:1.2 전:jeon:1.1 홍:hong:1.1 고:ko:0.9 문:moon:0.9 양:yang:0.9
손:son:0.9 배:bae:0.8 백:baek:0.8 허:heo:0.7 유:yoo:0.7 남:nam:0.6 심:shim:0.5 노:noh:0.5
하:ha:0.5 곽:kwak:0.4 성:sung:0.4 차:cha:0.4 주:joo:0.4 우:woo:0.4 구:koo:0.4 민:min:0.3
진:jin:0.3 나:na:0.3 지:ji:0.3 엄:eom:0.3 채:chae:0.3 원:won:0.3 천:cheon:0.2 방:bang:0.2
공:kong:0.2 현:hyun:0.2 함:ham:0.2 변:byun:0.2 염:yeom:0.1 여:yeo:0.1 추:choo:0.1 도:do:0.1
석:seok:0.1 선:sun:0.1 설:seol:0.1 마:ma:0.1 길:gil:0.1 연:yeon:0.1 위:wi:0.1 표:pyo:0.1
명:myung:0.1 기:ki:0.1 반:ban:0.05 왕:wang:0.05 금:keum:0.05 옥:ok:0.05 맹:maeng:0.05
제:je:0.05 모:mo:0.05 탁:tak:0.05 국:kook:0.05 남궁:namgung:0.05 황보:hwangbo:0.03
선우:sunwoo:0.03 제갈:jegal:0.02
"""

_KO_MALE = _words(
    """
민수 민준 서준 도윤 예준 시우 하준 지호 주원 지후 준우 준서 건우 현우 우진 선우 서진 연우 유준
정우 승우 승현 시윤 준혁 은우 지환 승민 지훈 유찬 윤우 민성 준영 시후 진우 수호 재윤 동현 성민
영수 영호 영철 정호 상훈 성호 성훈 재현 동욱 준호 태현 상철 광수 종훈 병철 진호 대현 형준 재민
기현 태민 민호 민재 현준 지성 우현 경민 도현 한결 태윤 민혁
"""
)

_KO_FEMALE = _words(
    """
서연 서윤 지우 서현 민서 하은 하윤 윤서 지유 지민 채원 수아 지아 지윤 은서 다은 예은 수빈 소율
예린 지은 민지 수진 지현 은지 혜진 미영 영희 순자 정숙 경희 미경 은영 현정 수연 유진 지혜 민정
소연 혜원 보람 아름 다현 예진 나연 하린 가은 유나 채은 세영 은비 소희 지수 연희 미숙 명숙 선영
은정 수정
"""
)

# Romanisation of every given-name syllable above, as people actually spell them in e-mails.
_KO_SYLLABLE_TEXT = """
민:min 수:su 준:jun 서:seo 도:do 윤:yun 예:ye 시:si 우:woo 하:ha 지:ji 호:ho 주:ju 원:won
후:hu 건:geon 현:hyun 진:jin 선:sun 연:yeon 유:yu 정:jung 승:seung 혁:hyuk 은:eun 환:hwan
훈:hoon 찬:chan 성:sung 영:young 철:chul 상:sang 재:jae 동:dong 욱:wook 태:tae 광:kwang
종:jong 병:byung 대:dae 형:hyung 기:ki 경:kyung 한:han 결:gyeol 아:a 다:da 빈:bin 소:so
율:yul 린:rin 혜:hye 미:mi 희:hee 순:soon 자:ja 숙:sook 나:na 가:ga 세:se 채:chae 비:bi
보:bo 람:ram 름:reum 명:myung 석:seok 규:kyu 식:sik 범:beom 용:yong 인:in
"""

# Most Korean given names are two syllables; these combine into many more plausible names.
_KO_GIVEN_PARTS = {
    "M": (
        "민준서도지현승성재동영정상태진우건시윤형종기경대병광한주수용",
        "수준호우현민석진혁훈철욱규빈성원재환영찬식범",
    ),
    "F": (
        "서지민수하유채예은다소나가세혜미영경정현연주윤보",
        "연윤우현서은원아빈율린진희영정경숙미나인혜지수주",
    ),
}

_KO_COMMON_FULL = [
    ("김", "민수", "M"),
    ("김", "지훈", "M"),
    ("이", "지은", "F"),
    ("박", "지민", "F"),
    ("이", "민호", "M"),
    ("김", "서연", "F"),
    ("최", "영호", "M"),
    ("정", "수진", "F"),
    ("김", "영희", "F"),
    ("이", "영수", "M"),
]

_EN_MALE = _words(
    """
James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew
Anthony Mark Donald Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward
Jason Jeffrey Ryan Jacob Gary Nicholas Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin
Samuel Gregory Alexander Frank Patrick Raymond Jack Dennis Jerry Tyler Aaron Adam Nathan Henry
Douglas Zachary Peter Kyle Noah Ethan Jeremy Walter Christian Keith Roger Terry Austin Sean
Gerald Carl Harold Dylan Arthur Lawrence Jordan Jesse Bryan Bruce Gabriel Logan Alan Albert
Elijah Wayne Randy Vincent Mason Roy Ralph Russell Bradley Philip Eugene Oliver Harry Oscar Leo
Freddie Alfie Archie Theo Toby Lewis Callum Liam Connor Jamie Owen Rhys Luke Max Finley Stanley
Hugo Rory Reuben Frederick Alistair Graham Malcolm Nigel Trevor Colin Neil Stuart Ian Gordon
Duncan Hamish Angus Euan Fraser Ross Craig Dean Darren Barry Clive Derek Martin Simon Howard
Leonard Victor Warren Marcus Dominic Julian Felix Jasper Sebastian Rupert Giles
"""
)

_EN_FEMALE = _words(
    """
Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty
Margaret Sandra Ashley Kimberly Emily Donna Michelle Carol Amanda Dorothy Melissa Deborah
Stephanie Rebecca Sharon Laura Cynthia Kathleen Amy Angela Shirley Anna Brenda Pamela Emma
Nicole Helen Samantha Katherine Christine Rachel Carolyn Janet Catherine Maria Heather Diane
Ruth Julie Olivia Joyce Virginia Victoria Kelly Lauren Christina Joan Evelyn Judith Megan Andrea
Cheryl Hannah Jacqueline Martha Gloria Teresa Ann Sara Madison Frances Kathryn Janice Jean
Abigail Alice Judy Sophia Grace Denise Amber Doris Marilyn Danielle Beverly Isabella Theresa
Diana Natalie Charlotte Marie Kayla Alexis Amelia Isla Ava Mia Poppy Freya Lily Ella Evie Ivy
Florence Rosie Willow Sienna Phoebe Harriet Imogen Eleanor Lucy Chloe Holly Zoe Gemma Kirsty
Leanne Nicola Claire Joanne Tracey Lorraine Gillian Fiona Morag Shona Ailsa Eilidh Caitlin Niamh
Siobhan Bethan Ffion Seren
"""
)

# Surnames in rough frequency order; persons() adds a few thousand compound surnames to these.
_EN_SURNAMES = _words(
    """
Smith Johnson Williams Brown Jones Taylor Davies Wilson Evans Thomas Miller Davis Roberts
Walker Wright Robinson Thompson White Hughes Edwards Green Hall Wood Harris Lewis Martin Jackson
Clarke Clark Turner Hill Scott Cooper Morris Ward Moore King Watson Baker Harrison Morgan Patel
Young Allen Mitchell James Anderson Phillips Lee Bell Parker Davidson Campbell Kelly Stewart
Murray Shaw Cook Richardson Carter Murphy Price Griffiths Bennett Gray Mason Rogers Hunt Palmer
Holmes Mills Barnes Knight Lloyd Butler Russell Barker Fisher Stevens Jenkins Dixon Fletcher
Ellis Harvey Simpson Howard Marshall Graham Pearson Reid Fox Webb Rose Chapman Matthews Gibson
Wells Powell Owen Chambers Armstrong Hudson Grant Kennedy Ross Hart Lawrence Adams Nelson Garcia
Martinez Rodriguez Hernandez Lopez Gonzalez Perez Sanchez Ramirez Torres Nguyen Flores Rivera
Gomez Diaz Cruz Reyes Morales Gutierrez Ortiz Peterson Bailey Reed Ramos Kim Cox Brooks Chavez
Mendoza Ruiz Alvarez Castillo Sanders Myers Long Foster Jimenez Perry Sullivan Coleman Henderson
Gonzales Vasquez Simmons Romero Jordan Patterson Alexander Hamilton Reynolds Griffin Wallace
Moreno West Cole Hayes Bryant Herrera Medina Aguilar Ford Castro Owens Fernandez McDonald Woods
Washington Vargas Henry Chen Freeman Tucker Guzman Burns Crawford Olson Porter Hunter Gordon
Mendez Silva Snyder Munoz Hicks Wagner Black Robertson Boyd Stone Salazar Warren Meyer Rice
Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Dunn Spencer
Hawkins Arnold Pierce Hansen Peters Santos Bradley Elliott Cunningham Duncan Carroll Lane Riley
Andrews Ray Berry Perkins Hoffman Johnston Richards Willis Carpenter Sandoval George Rios Watkins
Greene Wheeler Harper Burke Larson Morrison Franklin Carlson Austin Carr Lawson Jacobs OBrien
Lynch Singh Vega Bishop Montgomery Oliver Jensen Williamson Gilbert Dean Sims Howell Li Wong
Hanson McCoy Garrett Burton Fuller Wang Weber Welch Lucas Fields Park Yang Little Banks Day
Walsh Bowman Fowler Brewer May Holland Newman Curtis Douglas Schneider Joseph Barrett Keller
Wade Stanley Hopkins Barnett Bates Beck Lambert Byrd Craig Lowe Frazier Powers Neal Leonard
Gregory Sutton Fleming Rhodes Norris Jennings Watts Walters Cohen Moran Parks Steele Vaughn
Becker Holt Hale Benson Haynes Horton Miles Lyons Graves Bush Thornton Wolfe Warner Mann Dawson
Page McCarthy Love Reeves Chang Klein Baldwin Simon Hardy Higgins Cummings Chandler Sharp Barber
Bowen Dennis Robbins Ramsey Francis Griffith Blair Cross Quinn Moss Swanson Chan Khan Rodgers
Fitzgerald Stevenson Manning Gill Curry McLaughlin Harmon Gross Doyle Garner Newton Burgess
Reese Walton Blake Brady Goodman Webster Goodwin Fischer Potter Todd Malone Cannon Tate Sherman
Hubbard Hodges Wolf Saunders Rowe Gallagher Farmer Hammond Hampton Townsend Ingram Barton
Maxwell Waters Logan Norman Parsons Harrington Glover Osborne Buchanan Casey Floyd Patton Ball
Tyler Bowers Cobb Gibbs Bauer Moody McGuire Hartman French Kramer Pope Norton Sparks Flynn Yates
Hogan Marsh Pratt Stokes Ballard Lang Brock Drake Cain Burnett Shepherd Lamb McKenzie Olsen
Cochran Morton Nash Wilkins Briggs Shah Roth Nicholson Holloway Flowers Hoover Short Weiss
Underwood Bass Summers Houston Carson Morrow Clayton Whitaker Collier Carey Wilcox Poole Conley
Davenport Copeland Massey Huff Cameron Hood Monroe Randall Kirk Mathis Skinner Bradford Wall
Boone Kirby Wilkinson Bridges Bruce Atkinson Vincent York Hodge Abbott Allison Gates Chase
Sweeney Farrell Wyatt Dalton Horn Barron Phelps Heath Foley Atkins Hensley Glenn Harrell Shields
Huffman Choi Boyer Garrison Bond Kane Hancock Callahan Dillon Cline Wiggins Grimes Melton Savage
Booth Koch Golden Ware Brennan McDowell Marks Humphrey Baxter Sawyer Clay Tanner Hutchinson Berg
Wiley Gilmore Russo Hobbs Keith Wilkerson Ahmed Beard McClain Walter Henson Mosley McClure
Beasley Stephenson Snow Preston Vance Barry Johns Eaton Blackwell Dyer Prince Macdonald Solomon
Stafford English Hurst Woodard Shannon Kemp Nolan McCullough Merritt Moon Strong Kline Roach
Winters Jacobson Lester Knox Bullock Kerr Leach Meadows Orr Whitehead Pruitt Kent Conway McKee
Barr Berger McIntyre Blankenship Gaines Bartlett Durham Dorsey McCall ODonnell Stein Browning
Stout Lowery Sloan McLean Hendricks Calhoun Sexton Chung Gentry Hull Ellison Nielsen Gillespie
Buck Middleton Sellers Bradshaw McIntosh Howe Livingston Frost Glass Morse Knapp Herman Stark
Noble Spears Weeks Buckley McFarland Hickman Randolph Schaefer Walls House Reilly Pennington
Conrad Crosby Fitzpatrick Donovan Mays Mahoney Valentine Raymond Hahn McMillan Small Bentley
Peck Boyle Hanna Pace Rush Hurley Harding McConnell Ayers Everett Avery Pugh Mayer Bender
Shepard McMahon Landry Case Sampson Moses Blackburn Dunlap Gould Duffy Vaughan Herring McKay
Rivers Farley Bernard Ashley Friedman Potts Costa Nixon Clements Fry Best Benton Dougherty Crane
Haley Blanchard Horne Finley Lynn Bean Dodson Mullen Hayden Levy Huber Richmond Moyer Lim Frye
Sheppard Booker Waller Woodward Krueger Rasmussen Brandt Donaldson Stuart Faulkner Maynard
Coffey Estes Sanford Burch Maddox Spence McPherson Church Schmitt Stanton Cherry Compton Dudley
Pollard Hester Proctor Hinton Novak Good Madden McCann Terrell Jarvis Dickson Cantrell Mayo
Branch Hendrix Rollins Rowland Whitney Duke Odom Daugherty Travis Tang Parry Pritchard Rees
Bevan Howells Whitfield Ashworth Heywood Holroyd Sutcliffe Pickering MacLeod Paterson Sinclair
Baird Drummond Gallacher Fraser Milne Ritchie Mackay Munro Hamill Jamieson Lindsay Kerrigan
"""
)

# Compound surnames (Ashford, Brookley, ...) are built from these parts to enlarge the pool.
_EN_SURNAME_HEADS = _words(
    """
Ash Bar Black Brad Bram Bren Brook Bur Cal Carr Chat Clay Cole Corn Cran Dal Dun Elm Fair Fal
Farn Fen Gar Glen Gold Good Grant Green Hal Ham Har Hart Hath Haw Hay Hazel Hol Horn Hunt Kent
Kir Lang Lark Lin Lock Mar Mel Mid Mill Mor New North Oak Pen Pres Rad Ram Red Rid Roth Rush Sal
Shel Sher South Stan Stock Stone Sud Sum Thorn Wal War Wel West Whit Wil Win Wood Wyn Ather Bel
Bing Bow Brom Cam Ches Cliff Cro Dar Ed Els Ever Fox Hax Ing Kel Lat Lud Nor Ox Pem Quen Ren Sel
Tad Tem Ulver Ven Wex Yar
"""
)
_EN_SURNAME_TAILS = _words(
    """
by bury combe croft dale den don field ford gate ham hurst ington land ley low man more ridge
ton well wick wood worth ston stead sby bourne brook shaw thorpe holm leigh mont ney rick ing
cott hill
"""
)

_EN_NICKNAMES = {
    "Robert": ["Bob", "Rob", "Bobby"],
    "William": ["Bill", "Will", "Billy"],
    "Elizabeth": ["Liz", "Beth", "Betty"],
    "Katherine": ["Kate", "Katie"],
    "Catherine": ["Cathy", "Kate"],
    "Michael": ["Mike", "Mick"],
    "James": ["Jim", "Jimmy", "Jamie"],
    "Richard": ["Rick", "Dick", "Rich"],
    "Thomas": ["Tom", "Tommy"],
    "Christopher": ["Chris"],
    "Daniel": ["Dan", "Danny"],
    "Matthew": ["Matt"],
    "Anthony": ["Tony"],
    "Joseph": ["Joe", "Joey"],
    "Jennifer": ["Jen", "Jenny"],
    "Margaret": ["Maggie", "Peggy", "Meg"],
    "Patricia": ["Pat", "Trish"],
    "Susan": ["Sue", "Suzy"],
    "Alexander": ["Alex", "Sandy"],
    "Benjamin": ["Ben"],
    "Jonathan": ["Jon"],
    "Samuel": ["Sam"],
    "Nicholas": ["Nick"],
    "Edward": ["Ed", "Ted", "Eddie"],
    "Andrew": ["Andy", "Drew"],
    "Steven": ["Steve"],
    "Stephen": ["Steve"],
    "Timothy": ["Tim"],
    "Rebecca": ["Becky"],
    "Victoria": ["Vicky", "Tori"],
    "Jessica": ["Jess"],
    "Deborah": ["Debbie", "Deb"],
    "Charles": ["Charlie", "Chuck"],
    "Peter": ["Pete"],
    "David": ["Dave"],
    "Joshua": ["Josh"],
    "Zachary": ["Zach"],
    "Gregory": ["Greg"],
    "Kenneth": ["Ken", "Kenny"],
    "Donald": ["Don"],
    "Ronald": ["Ron", "Ronnie"],
    "Lawrence": ["Larry"],
    "Frederick": ["Fred", "Freddie"],
    "Harold": ["Harry"],
    "Henry": ["Harry", "Hank"],
    "Abigail": ["Abby"],
    "Amanda": ["Mandy"],
    "Samantha": ["Sam"],
    "Christina": ["Tina"],
    "Jacqueline": ["Jackie"],
    "Kimberly": ["Kim"],
    "Pamela": ["Pam"],
    "Barbara": ["Barb"],
    "Judith": ["Judy"],
    "Theresa": ["Terri"],
    "Cynthia": ["Cindy"],
    "Philip": ["Phil"],
    "Gerald": ["Gerry"],
    "Raymond": ["Ray"],
    "Eleanor": ["Ellie"],
    "Florence": ["Flo"],
}

_EN_COMMON_FULL = [
    ("Smith", "John", "M"),
    ("Brown", "Michael", "M"),
    ("Jones", "David", "M"),
    ("Williams", "James", "M"),
    ("Johnson", "Sarah", "F"),
    ("Davis", "Emily", "F"),
    ("Smith", "Robert", "M"),
    ("Johnson", "Mary", "F"),
    ("Taylor", "William", "M"),
    ("Wilson", "Elizabeth", "F"),
]


def _parse_ko_surnames() -> tuple[list[str], dict[str, str], np.ndarray]:
    names, roman, shares = [], {}, []
    for item in _KO_SURNAME_TEXT.split():
        hangul, latin, share = item.split(":")
        names.append(hangul)
        roman[hangul] = latin
        shares.append(float(share))
    weights = np.asarray(shares)
    return names, roman, weights / weights.sum()


_KO_SURNAMES, _KO_SURNAME_ROMAN, _KO_SURNAME_P = _parse_ko_surnames()
_KO_SYLLABLE_ROMAN = dict(item.split(":") for item in _KO_SYLLABLE_TEXT.split())


def _zipf(n: int, offset: float, power: float = 1.0) -> np.ndarray:
    """Rank-based weights 1/(rank+offset)^power, normalised: a few names common, many rare."""
    w = 1.0 / (np.arange(n) + offset) ** power
    return w / w.sum()


# --------------------------------------------------------------------------------------------
# Places, companies, phones
# --------------------------------------------------------------------------------------------

# (시도, short 시도, district, city column, alternative city spellings, postcode prefix,
#  landline area code, weight)
_KO_REGIONS = [
    ("서울특별시", "서울", "강남구", "서울", "서울특별시|서울시", "061", "02", 3.0),
    ("서울특별시", "서울", "서초구", "서울", "서울특별시|서울시", "065", "02", 2.5),
    ("서울특별시", "서울", "송파구", "서울", "서울특별시|서울시", "056", "02", 2.5),
    ("서울특별시", "서울", "마포구", "서울", "서울특별시|서울시", "040", "02", 2.0),
    ("서울특별시", "서울", "종로구", "서울", "서울특별시|서울시", "031", "02", 1.5),
    ("서울특별시", "서울", "영등포구", "서울", "서울특별시|서울시", "072", "02", 2.0),
    ("서울특별시", "서울", "용산구", "서울", "서울특별시|서울시", "043", "02", 1.5),
    ("서울특별시", "서울", "성동구", "서울", "서울특별시|서울시", "047", "02", 1.5),
    ("서울특별시", "서울", "관악구", "서울", "서울특별시|서울시", "088", "02", 1.5),
    ("서울특별시", "서울", "노원구", "서울", "서울특별시|서울시", "017", "02", 1.5),
    ("서울특별시", "서울", "강서구", "서울", "서울특별시|서울시", "077", "02", 1.5),
    ("서울특별시", "서울", "은평구", "서울", "서울특별시|서울시", "034", "02", 1.5),
    ("부산광역시", "부산", "해운대구", "부산", "부산광역시|부산시", "480", "051", 1.5),
    ("부산광역시", "부산", "부산진구", "부산", "부산광역시|부산시", "472", "051", 1.0),
    ("부산광역시", "부산", "동래구", "부산", "부산광역시|부산시", "478", "051", 1.0),
    ("인천광역시", "인천", "연수구", "인천", "인천광역시|인천시", "219", "032", 1.0),
    ("인천광역시", "인천", "부평구", "인천", "인천광역시|인천시", "213", "032", 1.0),
    ("대구광역시", "대구", "수성구", "대구", "대구광역시|대구시", "421", "053", 1.0),
    ("대전광역시", "대전", "유성구", "대전", "대전광역시|대전시", "341", "042", 1.0),
    ("광주광역시", "광주", "북구", "광주", "광주광역시|광주시", "611", "062", 0.8),
    ("울산광역시", "울산", "남구", "울산", "울산광역시|울산시", "447", "052", 0.6),
    ("경기도", "경기", "성남시 분당구", "성남", "성남시", "135", "031", 2.0),
    ("경기도", "경기", "수원시 영통구", "수원", "수원시", "166", "031", 1.5),
    ("경기도", "경기", "고양시 일산동구", "고양", "고양시", "104", "031", 1.2),
    ("경기도", "경기", "용인시 수지구", "용인", "용인시", "168", "031", 1.2),
    ("경기도", "경기", "안양시 동안구", "안양", "안양시", "140", "031", 1.0),
    ("세종특별자치시", "세종", "", "세종", "세종시|세종특별자치시", "301", "044", 0.5),
    ("제주특별자치도", "제주", "제주시", "제주", "제주시", "632", "064", 0.5),
    ("경상남도", "경남", "창원시 성산구", "창원", "창원시", "515", "055", 0.6),
]
_KO_REGION_P = np.array([r[-1] for r in _KO_REGIONS]) / sum(r[-1] for r in _KO_REGIONS)

_KO_ROADS = _words(
    """
테헤란로 강남대로 세종대로 을지로 종로 올림픽로 한강대로 도산대로 봉은사로 판교역로 중앙로 해운대로
센텀중앙로 월드컵로 양화로 신촌로 백범로 동일로 노해로 경인로 대학로 충장로 둔산로 대덕대로 광복로
수영로 반포대로 송파대로 영동대로 삼성로 언주로 논현로 선릉로 마포대로 통일로 문화로 번영로 평화로
"""
)
_KO_APARTMENTS = _words("래미안 자이 푸르지오 힐스테이트 아이파크 롯데캐슬 e편한세상 더샵 현대")

# UK towns: town/postcode areas/landline code/weight; the first twelve also serve customers().
_UK_TOWNS_TEXT = """
London/E N NW SE SW W/020/90; Manchester/M/0161/6; Birmingham/B/0121/11; Leeds/LS/0113/8;
Bristol/BS/0117/5; Edinburgh/EH/0131/5; Glasgow/G/0141/6; Liverpool/L/0151/5; Oxford/OX/01865/2;
Cambridge/CB/01223/2; Brighton/BN/01273/3; Cardiff/CF/029/4; Sheffield/S/0114/6;
Bradford/BD/01274/5; Leicester/LE/0116/4; Coventry/CV/024/4; Nottingham/NG/0115/3; Newcastle upon
Tyne/NE/0191/3; Hull/HU/01482/3; Stoke-on-Trent/ST/01782/3; Southampton/SO/023/3; Derby/DE/01332/3;
Portsmouth/PO/023/2; Plymouth/PL/01752/3; Reading/RG/0118/2; Northampton/NN/01604/2;
Luton/LU/01582/2; Wolverhampton/WV/01902/3; Bolton/BL/01204/3; Aberdeen/AB/01224/2;
Bournemouth/BH/01202/2; Norwich/NR/01603/2; Swindon/SN/01793/2; Swansea/SA/01792/2; Milton
Keynes/MK/01908/2; Southend-on-Sea/SS/01702/2; Middlesbrough/TS/01642/2; Sunderland/SR/0191/2;
Warrington/WA/01925/2; Huddersfield/HD/01484/2; Peterborough/PE/01733/2; Slough/SL/01753/2;
York/YO/01904/2; Belfast/BT/028/3; Ipswich/IP/01473/1; Gloucester/GL/01452/1; Exeter/EX/01392/1;
Blackpool/FY/01253/1; Dundee/DD/01382/1; Chester/CH/01244/1; Bath/BA/01225/1;
Canterbury/CT/01227/1; Lincoln/LN/01522/1; Carlisle/CA/01228/1; Inverness/IV/01463/1;
Preston/PR/01772/1; Worcester/WR/01905/1; Lancaster/LA/01524/1; Durham/DH/0191/1;
Salisbury/SP/01722/1; Truro/TR/01872/1; Hereford/HR/01432/1; Shrewsbury/SY/01743/1;
Colchester/CO/01206/1; Chelmsford/CM/01245/1; Guildford/GU/01483/1; Maidstone/ME/01622/1;
Crawley/RH/01293/1; Watford/WD/01923/1; St Albans/AL/01727/1; Harrogate/HG/01423/1;
Wakefield/WF/01924/1; Doncaster/DN/01302/1; Halifax/HX/01422/1; Kilmarnock/KA/01563/1;
Perth/PH/01738/1; Stirling/FK/01786/1; Dumfries/DG/01387/1; Kirkcaldy/KY/01592/1;
Paisley/PA/0141/1; Motherwell/ML/01698/1; Llandudno/LL/01492/1; Newport/NP/01633/1;
Telford/TF/01952/1; Walsall/WS/01922/1; Dudley/DY/01384/1; Oldham/OL/0161/1; Stockport/SK/0161/1;
Wigan/WN/01942/1; Blackburn/BB/01254/1; Twickenham/TW/020/1; Kingston upon Thames/KT/020/1;
Croydon/CR/020/1; Bromley/BR/020/1; Romford/RM/01708/1; Ilford/IG/020/1; Enfield/EN/020/1;
Harrow/HA/020/1; Uxbridge/UB/01895/1; Dartford/DA/01322/1; Sutton/SM/020/1; Tonbridge/TN/01732/1;
Hemel Hempstead/HP/01442/1; Stevenage/SG/01438/1
"""


def _parse_towns(text: str) -> list[tuple[str, str, str, int]]:
    towns = []
    for entry in text.split(";"):
        # Joining on single spaces undoes line wrapping inside names like "Newcastle upon Tyne".
        town, areas, code, weight = " ".join(entry.split()).split("/")
        towns.append((town, areas, code, int(weight)))
    return towns


_UK_TOWNS = _parse_towns(_UK_TOWNS_TEXT)
_N_CUSTOMER_UK_TOWNS = 12

# (city, state, ZIP prefix, area codes, alternative city spellings)
_US_CITIES = [
    ("New York", "NY", "100", "212 646 917", "NYC|New York City|New York, NY"),
    ("Boston", "MA", "021", "617 857", "Boston, MA|BOSTON"),
    ("San Francisco", "CA", "941", "415 628", "SF|San Francisco, CA"),
    ("Chicago", "IL", "606", "312 773", "Chicago, IL|CHICAGO"),
    ("Seattle", "WA", "981", "206", "Seattle, WA|SEATTLE"),
    ("Austin", "TX", "787", "512 737", "Austin, TX"),
    ("Los Angeles", "CA", "900", "213 310 323", "LA|Los Angeles, CA"),
    ("Denver", "CO", "802", "303 720", "Denver, CO"),
    ("Portland", "OR", "972", "503 971", "Portland, OR"),
    ("Atlanta", "GA", "303", "404 678", "Atlanta, GA"),
]

_UK_STREETS = _words(
    """
High Station Church Park Victoria Green Manor Kings Queens Mill London Albert York Grange
Springfield Orchard Windsor Chestnut Meadow Willow Elm Beech Cedar Ash Oak Highfield Richmond
Stanley Alexandra George
"""
)
_UK_SUFFIXES = _words("Street Road Lane Avenue Close Drive Way Gardens Crescent Terrace Place")
_US_STREETS = _words(
    """
Maple Oak Pine Cedar Elm Washington Lake Hill Sunset Main Park Lincoln Jefferson Madison
Franklin Highland Jackson Ridge Spring Walnut Chestnut Willow Church Center 2nd 3rd 5th
"""
)
_US_SUFFIXES = _words("Street Avenue Boulevard Road Drive Lane Court Place")
_STREET_ABBREV = {
    "Street": "St",
    "Road": "Rd",
    "Lane": "Ln",
    "Avenue": "Ave",
    "Close": "Cl",
    "Drive": "Dr",
    "Gardens": "Gdns",
    "Crescent": "Cres",
    "Terrace": "Ter",
    "Place": "Pl",
    "Boulevard": "Blvd",
    "Court": "Ct",
    "Way": "Way",
}
_UK_POSTCODE_LETTERS = "ABDEFGHJLNPQRSTUWXYZ"  # the letters Royal Mail uses in the inward code

# Korean companies: (name without legal form, e-mail domain, legal form).
_KO_COMPANIES = [
    ("삼성전자", "samsung.com", "주식회사"),
    ("현대자동차", "hyundai.com", "주식회사"),
    ("LG화학", "lgchem.com", "주식회사"),
    ("네이버", "navercorp.com", "주식회사"),
    ("카카오", "kakaocorp.com", "주식회사"),
    ("한빛소프트", "hanbitsoft.co.kr", "주식회사"),
    ("대한물류", "daehanlogis.co.kr", "주식회사"),
    ("서울데이터랩", "seouldatalab.co.kr", "주식회사"),
    ("한국정보통신", "kicc.co.kr", "주식회사"),
    ("푸른바이오", "pureunbio.co.kr", "주식회사"),
    ("동해해운", "donghaeshipping.co.kr", "주식회사"),
    ("새한건설", "saehancon.co.kr", "주식회사"),
    ("태평양식품", "tpfood.co.kr", "주식회사"),
    ("누리미디어", "nurimedia.co.kr", "주식회사"),
    ("미래테크", "miraetech.co.kr", "주식회사"),
    ("한울에너지", "hanulenergy.co.kr", "주식회사"),
    ("가온전자", "gaonelec.co.kr", "주식회사"),
    ("다온컴퍼니", "daon.co.kr", "유한회사"),
    ("세종정밀", "sejongprecision.co.kr", "주식회사"),
    ("우리유통", "wooridist.co.kr", "유한회사"),
    ("청담뷰티", "cheongdambeauty.co.kr", "유한회사"),
    ("바른회계컨설팅", "bareunac.co.kr", "유한회사"),
]
_EN_COMPANIES = [
    ("Acme", "acme.com"),
    ("Globex", "globex.com"),
    ("Initech", "initech.com"),
    ("Northwind Traders", "northwind.com"),
    ("Blue Harbor Logistics", "blueharbor.com"),
    ("Greenfield Analytics", "greenfield-analytics.com"),
    ("Redwood Capital", "redwoodcap.com"),
    ("Summit Health", "summithealth.com"),
    ("Brightline Media", "brightline.com"),
    ("Ironbridge Engineering", "ironbridge.co.uk"),
    ("Silverline Foods", "silverlinefoods.co.uk"),
    ("Oakmont Consulting", "oakmont.com"),
    ("Kestrel Software", "kestrelsoft.com"),
    ("Harbourside Hotels", "harbourside.co.uk"),
    ("Pinecrest Retail", "pinecrest.com"),
    ("Lumen Labs", "lumenlabs.io"),
    ("Crescent Energy", "crescent-energy.com"),
    ("Falcon Freight", "falconfreight.co.uk"),
    ("Thistle Insurance", "thistle.co.uk"),
    ("Copperleaf Design", "copperleaf.co.uk"),
]
# Ways of writing each legal form; index 0 is the most common spelling.
_COMPANY_STYLES = {
    "주식회사": ["(주){b}", "{b} 주식회사", "㈜{b}", "주식회사 {b}", "{b}(주)", "(주) {b}", "{b}"],
    "유한회사": ["유한회사 {b}", "{b} 유한회사", "(유){b}", "{b}"],
    "inc": ["{b} Inc.", "{B}, Inc", "{b} Incorporated", "{b}, Inc.", "{b} Inc", "{b}"],
    "llc": ["{b} LLC", "{b}, L.L.C.", "{B} LLC", "{b} L.L.C.", "{b}"],
    "corp": ["{b} Corp.", "{b} Corporation", "{B} CORP", "{b} Corp", "{b}"],
    "ltd": ["{b} Ltd", "{b} Limited", "{B} LTD.", "{b} Ltd.", "{b}"],
    "plc": ["{b} plc", "{b} PLC", "{b} Public Limited Company", "{b}"],
}

_KO_MAIL_DOMAINS = ["naver.com", "gmail.com", "daum.net", "hanmail.net", "kakao.com", "nate.com"]
_KO_MAIL_P = np.array([0.36, 0.26, 0.1, 0.1, 0.1, 0.08])
_UK_MAIL_DOMAINS = [
    "gmail.com",
    "outlook.com",
    "hotmail.co.uk",
    "yahoo.co.uk",
    "btinternet.com",
    "icloud.com",
    "sky.com",
]
_UK_MAIL_P = np.array([0.35, 0.15, 0.14, 0.12, 0.08, 0.1, 0.06])
_US_MAIL_DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com", "aol.com"]
_US_MAIL_P = np.array([0.4, 0.17, 0.14, 0.1, 0.13, 0.06])

_SOURCES = ["crm", "web", "shop", "import"]
_SOURCE_P = np.array([0.4, 0.3, 0.2, 0.1])

# A phone is (country calling code, national digit groups with the trunk 0 where there is one).
Phone = tuple[str, tuple[str, ...]]

_PHONE_STYLES = {
    "82": ["dash", "plain", "intl", "dot", "intl_dash"],
    "44": ["space", "plain", "intl", "intl_plain"],
    "1": ["paren", "intl", "dash", "plain", "dot", "intl_plain"],
}


def _render_phone(phone: Phone, style: str) -> str:
    cc, groups = phone
    intl = [groups[0][1:] if groups[0].startswith("0") else groups[0], *groups[1:]]
    if style == "dash":
        return "-".join(groups)
    if style == "plain":
        return "".join(groups)
    if style == "dot":
        return ".".join(groups)
    if style == "space":
        return " ".join(groups)
    if style == "intl":
        if cc == "1":
            return f"+1 {'-'.join(groups)}"
        return f"+{cc} {' '.join(intl)}"
    if style == "intl_dash":
        return f"+{cc}-{'-'.join(intl)}"
    if style == "intl_plain":
        return f"+{cc}{''.join(intl)}"
    if style == "paren":
        return f"({groups[0]}) {groups[1]}-{groups[2]}"
    raise ValueError(f"unknown phone style {style!r}")


# --------------------------------------------------------------------------------------------
# Typos
# --------------------------------------------------------------------------------------------

_KEY_ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


def _keyboard_neighbours() -> dict[str, str]:
    """Letters next to each letter on a QWERTY keyboard: the usual source of substitutions."""
    pos = {}
    for r, row in enumerate(_KEY_ROWS):
        for c, ch in enumerate(row):
            pos[ch] = (r, c + 0.5 * r)
    out = {}
    for ch, (r, c) in pos.items():
        near = [o for o, (r2, c2) in pos.items() if abs(r - r2) <= 1 and abs(c - c2) <= 1]
        out[ch] = "".join(o for o in near if o != ch)
    return out


_NEIGHBOURS = _keyboard_neighbours()


def _en_typo(rng: np.random.Generator, word: str) -> str:
    """One swapped, dropped, doubled or mistyped letter, never the first (people get that right)."""
    n = len(word)
    for _ in range(12):
        op = int(rng.integers(4))
        i = int(rng.integers(1, n)) if n >= 2 else 0
        if op == 0 and n >= 3 and i < n - 1 and word[i].lower() != word[i + 1].lower():
            new = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif op == 1 and n >= 3:
            new = word[:i] + word[i + 1 :]
        elif op == 2:
            new = word[: i + 1] + word[i] + word[i + 1 :]
        elif op == 3 and word[i].lower() in _NEIGHBOURS:
            near = _NEIGHBOURS[word[i].lower()]
            ch = near[int(rng.integers(len(near)))]
            new = word[:i] + (ch.upper() if word[i].isupper() else ch) + word[i + 1 :]
        else:
            continue
        if new != word:
            return new
    return word + word[-1]


# Jamo indices (initial 0-18, medial 0-20, final 0-27) that are easily confused with each other.
_INITIAL_SWAP = {0: 15, 15: 0, 3: 16, 16: 3, 7: 17, 17: 7, 12: 14, 14: 12, 9: 10, 10: 9, 1: 0}
_MEDIAL_SWAP = {0: 2, 2: 0, 1: 5, 5: 1, 4: 6, 6: 4, 8: 12, 12: 8, 13: 17, 17: 13, 18: 13}
_MEDIAL_SWAP.update({20: 19, 19: 20, 11: 5, 7: 3, 3: 7})
_FINAL_SWAP = {4: 21, 21: 4, 16: 4, 8: 0, 1: 0}


def _ko_typo(rng: np.random.Generator, name: str, surname_len: int) -> str:
    """Change one jamo of one syllable (민수 → 민슈, 김 → 킴), mostly in the given name."""
    syllables = [i for i, ch in enumerate(name) if 0xAC00 <= ord(ch) <= 0xD7A3]
    given = [i for i in syllables if i >= surname_len]
    pool = given if given and rng.random() < 0.85 else syllables
    for _ in range(8):
        i = pool[int(rng.integers(len(pool)))]
        code = ord(name[i]) - 0xAC00
        ini, med, fin = code // 588, (code % 588) // 28, code % 28
        options = []
        if med in _MEDIAL_SWAP:
            options.append((ini, _MEDIAL_SWAP[med], fin))
        if ini in _INITIAL_SWAP:
            options.append((_INITIAL_SWAP[ini], med, fin))
        if fin in _FINAL_SWAP:
            options.append((ini, med, _FINAL_SWAP[fin]))
        if options:
            a, b, c = options[int(rng.integers(len(options)))]
            return name[:i] + chr(0xAC00 + (a * 21 + b) * 28 + c) + name[i + 1 :]
    return name


# --------------------------------------------------------------------------------------------
# customers(): people
# --------------------------------------------------------------------------------------------


@dataclass
class _Person:
    lang: str  # "ko" or "en": how the name is written
    country: str  # "KR", "UK" or "US": where the home is
    surname: str
    given: str
    sex: str
    birth: dt.date
    home: dict[str, str]
    phone: Phone
    phone_style: str
    email: str = ""
    company: tuple[str, str, str, int] | None = None  # (name, domain, legal form, usual style)


def _pick(rng: np.random.Generator, seq: list[Any], p: np.ndarray | None = None) -> Any:
    return seq[int(rng.choice(len(seq), p=p))]


def _random_date(rng: np.random.Generator, first: dt.date, last: dt.date) -> dt.date:
    return first + dt.timedelta(days=int(rng.integers((last - first).days + 1)))


def _digits(rng: np.random.Generator, n: int, first_nonzero: bool = False) -> str:
    d = rng.integers(0, 10, n)
    if first_nonzero:
        d[0] = rng.integers(1, 10)
    return "".join(str(int(x)) for x in d)


def _new_home(
    rng: np.random.Generator, country: str, avoid_city: str | None = None
) -> dict[str, str]:
    for _ in range(20):
        home = _new_home_once(rng, country)
        if home["city"] != avoid_city:
            return home
    return home


def _new_home_once(rng: np.random.Generator, country: str) -> dict[str, str]:
    if country == "KR":
        sido, short, district, city, alts, prefix, area, _ = _KO_REGIONS[
            int(rng.choice(len(_KO_REGIONS), p=_KO_REGION_P))
        ]
        number = str(int(rng.integers(1, 600)))
        if rng.random() < 0.15:
            number += f"-{int(rng.integers(1, 30))}"
        kind = rng.random()
        if kind < 0.45:
            detail = (
                f"{_pick(rng, _KO_APARTMENTS)} {int(rng.integers(101, 120))}동 "
                f"{int(rng.integers(1, 26))}{int(rng.integers(1, 5)):02d}호"
            )
        elif kind < 0.65:
            detail = f"{int(rng.integers(2, 20))}층"
        else:
            detail = ""
        return {
            "country": "KR",
            "sido": sido,
            "sido_short": short,
            "district": district,
            "road": _pick(rng, _KO_ROADS),
            "number": number,
            "detail": detail,
            "city": city,
            "city_alts": alts,
            "postcode": prefix + _digits(rng, 2),
            "area": area,
        }
    if country == "UK":
        weights = np.array([t[3] for t in _UK_TOWNS[:_N_CUSTOMER_UK_TOWNS]], dtype=float)
        town, areas, area, _ = _UK_TOWNS[int(rng.choice(len(weights), p=weights / weights.sum()))]
        postcode = (
            f"{_pick(rng, areas.split())}{int(rng.integers(1, 21))} {int(rng.integers(1, 10))}"
            f"{_pick(rng, list(_UK_POSTCODE_LETTERS))}{_pick(rng, list(_UK_POSTCODE_LETTERS))}"
        )
        unit = f"Flat {int(rng.integers(1, 40))}" if rng.random() < 0.3 else ""
        return {
            "country": "UK",
            "number": str(int(rng.integers(1, 250))),
            "street": _pick(rng, _UK_STREETS),
            "suffix": _pick(rng, _UK_SUFFIXES),
            "unit": unit,
            "city": town,
            "city_alts": f"{town.upper()}|{town}, UK",
            "postcode": postcode,
            "area": area,
        }
    city, _state, zip3, areas, alts = _US_CITIES[int(rng.integers(len(_US_CITIES)))]
    unit = f"Apt {int(rng.integers(1, 30))}{_pick(rng, list('ABCD'))}" if rng.random() < 0.3 else ""
    return {
        "country": "US",
        "number": str(int(rng.integers(10, 9900))),
        "street": _pick(rng, _US_STREETS),
        "suffix": _pick(rng, _US_SUFFIXES),
        "unit": unit,
        "city": city,
        "city_alts": alts,
        "postcode": zip3 + _digits(rng, 2),
        "area": _pick(rng, areas.split()),
    }


def _new_mobile(rng: np.random.Generator, country: str, used: dict[str, bool]) -> Phone:
    while True:
        if country == "KR":
            phone: Phone = ("82", ("010", _digits(rng, 4, True), _digits(rng, 4)))
        elif country == "UK":
            phone = ("44", (f"07{int(rng.integers(400, 1000))}", _digits(rng, 6)))
        else:
            area = _pick(rng, _pick(rng, _US_CITIES)[3].split())
            phone = ("1", (area, str(int(rng.integers(201, 1000))), _digits(rng, 4)))
        key = "".join(phone[1])
        if key not in used:
            used[key] = True
            return phone


def _new_landline(rng: np.random.Generator, home: dict[str, str], used: dict[str, bool]) -> Phone:
    while True:
        area = home["area"]
        if home["country"] == "KR":
            middle = _digits(rng, 4 if area == "02" else 3, True)
            phone: Phone = ("82", (area, middle, _digits(rng, 4)))
        elif home["country"] == "UK":
            if len(area) == 3:
                phone = ("44", (area, _digits(rng, 4, True), _digits(rng, 4)))
            elif len(area) == 4:
                phone = ("44", (area, _digits(rng, 3, True), _digits(rng, 4)))
            else:
                phone = ("44", (area, _digits(rng, 6, True)))
        else:
            phone = ("1", (area, str(int(rng.integers(201, 1000))), _digits(rng, 4)))
        key = "".join(phone[1])
        if key not in used:
            used[key] = True
            return phone


def _phone_style(rng: np.random.Generator, phone: Phone) -> str:
    """The style a person usually writes their number in (mostly the national convention)."""
    cc = phone[0]
    if cc == "82":
        return "dash" if rng.random() < 0.88 else "plain"
    if cc == "44":
        return "space" if rng.random() < 0.5 else "intl"
    return _pick(rng, ["paren", "intl", "dash"], np.array([0.4, 0.4, 0.2]))


def _ko_roman(given: str) -> list[str]:
    return [_KO_SYLLABLE_ROMAN[s] for s in given]


def _new_email(rng: np.random.Generator, p: _Person, used: dict[str, bool]) -> str:
    year = p.birth.year
    if p.lang == "ko":
        parts = _ko_roman(p.given)
        g, s, ini = "".join(parts), _KO_SURNAME_ROMAN[p.surname], "".join(x[0] for x in parts)
    else:
        g, s = p.given.lower(), p.surname.lower()
        ini = g[0]
    for attempt in range(30):
        nn = int(rng.integers(1, 100))
        local = _pick(
            rng,
            [
                f"{g}.{s}",
                f"{s}{g}",
                f"{s}.{g}",
                f"{s}{ini}{year % 100:02d}",
                f"{g}{year}",
                f"{ini}{s}{nn}",
                f"{g}_{s}",
                f"{g[0]}{s}",
            ],
        )
        if attempt > 10:
            local += str(int(rng.integers(10, 1000)))
        if p.company is not None and rng.random() < 0.2:
            domain = p.company[1]
        elif p.country == "KR" or p.lang == "ko":
            domain = _pick(rng, _KO_MAIL_DOMAINS, _KO_MAIL_P / _KO_MAIL_P.sum())
        elif p.country == "UK":
            domain = _pick(rng, _UK_MAIL_DOMAINS, _UK_MAIL_P / _UK_MAIL_P.sum())
        else:
            domain = _pick(rng, _US_MAIL_DOMAINS, _US_MAIL_P / _US_MAIL_P.sum())
        email = f"{local}@{domain}"
        if email not in used:
            used[email] = True
            return email
    raise RuntimeError("could not find a free e-mail address")  # pragma: no cover


def _new_company(rng: np.random.Generator, country: str) -> tuple[str, str, str, int]:
    if country == "KR":
        name, domain, form = _pick(rng, _KO_COMPANIES)
    else:
        name, domain = _pick(rng, _EN_COMPANIES)
        if country == "UK":
            form = _pick(rng, ["ltd", "plc"], np.array([0.75, 0.25]))
        else:
            form = _pick(rng, ["inc", "llc", "corp"], np.array([0.5, 0.3, 0.2]))
    usual = 0 if rng.random() < 0.6 else int(rng.integers(len(_COMPANY_STYLES[form]) - 1))
    return name, domain, form, usual


def _given_pool(lang: str, sex: str) -> tuple[list[str], np.ndarray]:
    """Given names and their weights for customers()."""
    if lang == "en":
        names = _EN_MALE[:120] if sex == "M" else _EN_FEMALE[:120]
        return names, _zipf(len(names), 8.0, 0.7)
    # The listed popular names take half the draws and syllable combinations the other half, so
    # that full-name clashes are about as rare as in a real customer base.
    listed = list(dict.fromkeys(_KO_MALE if sex == "M" else _KO_FEMALE))
    heads, tails = _KO_GIVEN_PARTS[sex]
    seen = dict.fromkeys(listed)
    built = [h + t for h in heads for t in tails if h != t and h + t not in seen]
    weights = np.concatenate(
        [np.full(len(listed), 0.5 / len(listed)), np.full(len(built), 0.5 / len(built))]
    )
    return listed + built, weights


_GIVEN_POOLS = {(lang, sex): _given_pool(lang, sex) for lang in ("ko", "en") for sex in "MF"}


def _draw_given(
    rng: np.random.Generator,
    lang: str,
    sex: str,
    avoid: Sequence[str] = (),
    share_first: str | None = None,
) -> str:
    names, weights = _GIVEN_POOLS[(lang, sex)]
    keep = np.array([n not in avoid for n in names])
    if share_first:
        # Korean siblings often share a generation syllable (돌림자): 민수 and 민호.
        same = keep & np.array([n.startswith(share_first) for n in names])
        if same.any():
            keep = same
    p = np.where(keep, weights, 0.0)
    return _pick(rng, names, p / p.sum())


def _draw_surname(rng: np.random.Generator, lang: str) -> str:
    if lang == "ko":
        return _pick(rng, _KO_SURNAMES, _KO_SURNAME_P)
    return _pick(rng, _EN_SURNAMES[:150], _zipf(150, 6.0))


def _new_person(
    rng: np.random.Generator,
    lang: str,
    country: str,
    used: dict[str, bool],
    *,
    surname: str | None = None,
    given: str | None = None,
    sex: str | None = None,
    birth: dt.date | None = None,
    home: dict[str, str] | None = None,
) -> _Person:
    sex = sex or ("M" if rng.random() < 0.5 else "F")
    mobile_country = country
    if lang == "en" and rng.random() < 0.3:
        mobile_country = "KR"  # expats in Korea keep an English address on file but use a 010
    phone = _new_mobile(rng, mobile_country, used)
    p = _Person(
        lang=lang,
        country=country,
        surname=surname or _draw_surname(rng, lang),
        given=given or _draw_given(rng, lang, sex),
        sex=sex,
        birth=birth or _random_date(rng, dt.date(1950, 1, 1), dt.date(2005, 12, 31)),
        home=home or _new_home(rng, country),
        phone=phone,
        phone_style="",
    )
    p.phone_style = _phone_style(rng, phone)
    if rng.random() < 0.65:
        p.company = _new_company(rng, country)
    return p


def _draw_lang(rng: np.random.Generator) -> tuple[str, str]:
    if rng.random() < 0.6:
        return "ko", "KR"
    return "en", ("UK" if rng.random() < 0.5 else "US")


def _household(rng: np.random.Generator, used: dict[str, bool]) -> list[_Person]:
    """Relatives: one surname, home and landline or company; different given names and births."""
    lang, country = _draw_lang(rng)
    size = int(rng.choice([2, 3, 4], p=[0.55, 0.35, 0.1]))
    head = _new_person(rng, lang, country, used)
    head.birth = _random_date(rng, dt.date(1950, 1, 1), dt.date(1978, 12, 31))
    members = [head]
    generation = None
    while len(members) < size:
        sex = "M" if rng.random() < 0.5 else "F"
        if rng.random() < 0.7:
            birth = head.birth + dt.timedelta(days=int(rng.integers(24 * 365, 37 * 365)))
        else:
            birth = head.birth + dt.timedelta(days=int(rng.integers(-8 * 365, 8 * 365)))
        if any(abs((birth - m.birth).days) < 300 for m in members):
            continue  # twins are made on purpose elsewhere; here births must differ
        if lang == "ko" and len(members) >= 2 and generation is None and rng.random() < 0.5:
            generation = members[-1].given[0]
        given = _draw_given(rng, lang, sex, [m.given for m in members], generation)
        relative = _new_person(
            rng,
            lang,
            country,
            used,
            surname=head.surname,
            given=given,
            sex=sex,
            birth=birth,
            home=head.home,
        )
        members.append(relative)
    landline = rng.random() < 0.55
    shared_company = not landline or rng.random() < 0.25
    line = _new_landline(rng, head.home, used) if landline else None
    company = _new_company(rng, country)
    for m in members:
        if line is not None:
            m.phone, m.phone_style = line, _phone_style(rng, line)
        if shared_company:
            m.company = company  # a family business
    return members


def _twins(rng: np.random.Generator, used: dict[str, bool]) -> list[_Person]:
    lang, country = _draw_lang(rng)
    first = _new_person(rng, lang, country, used)
    first.birth = _random_date(rng, dt.date(1965, 1, 1), dt.date(2005, 12, 31))
    sex = "M" if rng.random() < 0.5 else "F"
    share = first.given[0] if lang == "ko" and rng.random() < 0.5 else None
    given = _draw_given(rng, lang, sex, [first.given], share)
    second = _new_person(
        rng,
        lang,
        country,
        used,
        surname=first.surname,
        given=given,
        sex=sex,
        birth=first.birth,
        home=first.home,
    )
    return [first, second]


def _namesakes(rng: np.random.Generator, used: dict[str, bool]) -> list[_Person]:
    """Same common full name, but different birth date, phone and city."""
    lang, country = _draw_lang(rng)
    surname, given, sex = _pick(rng, _KO_COMMON_FULL if lang == "ko" else _EN_COMMON_FULL)
    people: list[_Person] = []
    for _ in range(int(rng.choice([2, 3], p=[0.7, 0.3]))):
        home = _new_home(rng, country, avoid_city=people[-1].home["city"] if people else None)
        people.append(
            _new_person(rng, lang, country, used, surname=surname, given=given, sex=sex, home=home)
        )
    return people


def _make_people(rng: np.random.Generator, n_people: int) -> list[_Person]:
    used: dict[str, bool] = {}
    plan = (
        ["house"] * round(n_people * 0.035)
        + ["twins"] * round(n_people * 0.008)
        + ["namesakes"] * round(n_people * 0.016)
    )
    people: list[_Person] = []
    for kind in plan:
        if kind == "house":
            group = _household(rng, used)
        elif kind == "twins":
            group = _twins(rng, used)
        else:
            group = _namesakes(rng, used)
        people.extend(group[: n_people - len(people)])
    while len(people) < n_people:
        lang, country = _draw_lang(rng)
        people.append(_new_person(rng, lang, country, used))
    for p in people:
        p.email = _new_email(rng, p, used)
    return people


# --------------------------------------------------------------------------------------------
# customers(): records
# --------------------------------------------------------------------------------------------


def _render_date(d: dt.date, style: str) -> str:
    if style == "iso":
        return d.isoformat()
    if style == "compact":
        return f"{d.year}{d.month:02d}{d.day:02d}"
    if style == "dots":
        return f"{d.year}.{d.month}.{d.day}"
    if style == "korean":
        return f"{d.year}년 {d.month}월 {d.day}일"
    if style == "dmy":
        return f"{d.day:02d}/{d.month:02d}/{d.year}"
    raise ValueError(f"unknown date style {style!r}")


def _render_address(rng: np.random.Generator, home: dict[str, str], vary: bool) -> str:
    if home["country"] == "KR":
        sido = home["sido"]
        detail = home["detail"]
        sep = ", "
        if vary:
            sido = _pick(rng, [home["sido_short"], "", sido])
            if detail and rng.random() < 0.4:
                detail = ""
            sep = _pick(rng, [", ", " "])
        head = " ".join(x for x in (sido, home["district"], home["road"], home["number"]) if x)
        return head + (sep + detail if detail else "")
    suffix, unit = home["suffix"], home["unit"]
    if vary and rng.random() < 0.6:
        suffix = _STREET_ABBREV[suffix]
    street = f"{home['number']} {home['street']} {suffix}"
    if unit:
        if home["country"] == "UK":
            flat = unit.split()[1]
            text = _pick(rng, [f"{unit}, {street}", f"{street}, {unit}", f"{flat}/{street}"])
            text = text if vary else f"{unit}, {street}"
        else:
            apt = unit.split()[1]
            text = _pick(rng, [f"{street} {unit}", f"{street}, Apt. {apt}", f"{street} #{apt}"])
            text = text if vary else f"{street} {unit}"
    else:
        text = street
    if vary and rng.random() < 0.15:
        text = text.upper()
    return text


def _render_city(rng: np.random.Generator, home: dict[str, str], vary: bool) -> str:
    if vary:
        return _pick(rng, home["city_alts"].split("|"))
    return home["city"]


def _render_postcode(rng: np.random.Generator, home: dict[str, str], vary: bool) -> str:
    code = home["postcode"]
    if vary and home["country"] == "UK":
        return _pick(rng, [code.replace(" ", ""), code.lower()])
    return code


def _render_name(rng: np.random.Generator, p: _Person, dup: bool) -> str:
    if p.lang == "ko":
        name = p.surname + p.given
        if dup and rng.random() < 0.12:
            name = _ko_typo(rng, name, len(p.surname))
        if rng.random() < (0.15 if dup else 0.03):
            name = name[: len(p.surname)] + " " + name[len(p.surname) :]
        return name
    first, last = p.given, p.surname
    if dup and first in _EN_NICKNAMES and rng.random() < 0.3:
        first = _pick(rng, _EN_NICKNAMES[first])
    if dup and rng.random() < 0.12:
        if rng.random() < 0.5:
            first = _en_typo(rng, first)
        else:
            last = _en_typo(rng, last)
    name = f"{last} {first}" if dup and rng.random() < 0.07 else f"{first} {last}"
    if dup and rng.random() < 0.04:
        name = name.upper()
    return name


def _render_email(rng: np.random.Generator, email: str, dup: bool) -> str:
    if not dup or rng.random() >= 0.15:
        return email
    local, domain = email.split("@")
    style = int(rng.integers(3))
    if style == 0:
        return email.upper()
    if style == 1:
        return ".".join(x.capitalize() for x in local.split(".")) + "@" + domain.capitalize()
    return f"{local}@{domain.upper()}"


_BASE_MISSING = {
    "birth_date": 0.06,
    "phone": 0.03,
    "email": 0.05,
    "company": 0.0,
    "address": 0.03,
    "postcode": 0.05,
    "city": 0.02,
}
_DUP_MISSING = 0.15  # share of each non-key field left blank in a duplicate record


def _render_record(
    rng: np.random.Generator, p: _Person, dup: bool, used: dict[str, bool]
) -> dict[str, str | None]:
    source = _pick(rng, _SOURCES, _SOURCE_P)
    # Duplicates and bulk imports are where the non-standard spellings come from.
    p_vary = (0.45 if dup else 0.12) + (0.25 if source == "import" else 0.0)

    phone, phone_style, email, home = p.phone, p.phone_style, p.email, p.home
    if dup and rng.random() < 0.08:
        phone = _new_mobile(rng, p.country if p.phone[0] != "82" else "KR", used)
    if dup and rng.random() < 0.08:
        email = _new_email(rng, p, used)  # a new address after changing provider or job
    if dup and rng.random() < 0.04:
        home = _new_home(rng, p.country, avoid_city=p.home["city"])

    if rng.random() < p_vary:
        phone_style = _pick(rng, [s for s in _PHONE_STYLES[phone[0]] if s != phone_style])
    date_style = "iso"
    if rng.random() < p_vary:
        # D/M/Y is the British habit; 1990년 3월 5일 only appears for Korean customers.
        styles = (
            ["compact", "dots", "korean"] if p.lang == "ko" else ["dmy", "dmy", "compact", "dots"]
        )
        date_style = _pick(rng, styles)
    company = None
    if p.company is not None:
        name, _domain, form, usual = p.company
        style = usual
        if rng.random() < p_vary + 0.1:
            style = int(rng.integers(len(_COMPANY_STYLES[form])))
        company = _COMPANY_STYLES[form][style].format(b=name, B=name.upper())

    record: dict[str, str | None] = {
        "name": _render_name(rng, p, dup),
        "birth_date": _render_date(p.birth, date_style),
        "phone": _render_phone(phone, phone_style),
        "email": _render_email(rng, email, dup),
        "company": company,
        "address": _render_address(rng, home, rng.random() < p_vary),
        "postcode": _render_postcode(rng, home, rng.random() < p_vary),
        "city": _render_city(rng, home, rng.random() < p_vary),
        "source": source,
        "signup_date": _random_date(rng, dt.date(2016, 1, 1), dt.date(2025, 6, 30)).isoformat(),
    }
    for key, p_base in _BASE_MISSING.items():
        if rng.random() < (_DUP_MISSING if dup else p_base):
            record[key] = None
    return record


def customers(n_people: int = 1400, seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A small CRM customer table, about 60% Korean and 40% English customers.

    About 30% of the people have 2-4 records that differ by typos, nicknames, spacing, formats,
    blanks and moves; relatives, twins and namesakes look alike but are different people.
    Returns (records, truth): records has `CUSTOMER_COLUMNS` (all strings, missing is NaN), and
    truth maps every `customer_id` to a `person_id`. The same arguments give the same frames.
    """
    records, truth, _people, _used = _customers(n_people, seed)
    return records, truth


def _customers(
    n_people: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, list[_Person], dict[str, bool]]:
    """customers(), and the people behind it (person i is `P-{i + 1}`) with the e-mail
    addresses and phone numbers it used, from which later loads go on."""
    if n_people < 1:
        raise ValueError(f"n_people must be at least 1, got {n_people}")
    rng = np.random.default_rng(seed)
    people = _make_people(rng, n_people)
    people = [people[i] for i in rng.permutation(n_people)]  # person ids must not reveal groups
    n_records = np.ones(n_people, dtype=int)
    has_dups = rng.random(n_people) < 0.3
    n_records[has_dups] += rng.choice([1, 2, 3], size=int(has_dups.sum()), p=[0.6, 0.3, 0.1])

    used = {p.email: True for p in people}
    used.update({"".join(p.phone[1]): True for p in people})
    width = max(5, len(str(n_people)))
    rows, owners = [], []
    for i, (p, k) in enumerate(zip(people, n_records, strict=True)):
        for j in range(int(k)):
            rows.append(_render_record(rng, p, dup=j > 0, used=used))
            owners.append(f"P-{i + 1:0{width}d}")

    order = rng.permutation(len(rows))
    width = max(6, len(str(len(rows))))
    ids = [f"C-{i + 1:0{width}d}" for i in range(len(rows))]
    records = pd.DataFrame([rows[i] for i in order], columns=CUSTOMER_COLUMNS[1:])
    records.insert(0, "customer_id", ids)
    # A string dtype that keeps missing values missing on pandas 2.2 too ("str" there is
    # Python's str, which turns None into the text "None").
    records = records.astype(pd.StringDtype())
    truth = pd.DataFrame({"customer_id": ids, "person_id": [owners[i] for i in order]}, dtype="str")
    return records, truth, people, used


def customer_updates(
    days: int = 2, per_day: int = 150, n_people: int = 1400, seed: int = 7
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """The loads that follow `customers(n_people, seed)`: `days` tables (day 2, day 3, ...) of
    about `per_day` new records each, for `linkage update`.

    Half of a day's records are later records of people already on file (from the first table
    or an earlier day), with a duplicate's noise (typos, formats, blanks, moves); the others are
    new people, a fifth of them with two records that day. Ids go on where the previous table
    stopped (`C-002005` ...), new people's where the people stopped (`P-01401` ...). Returns
    one (records, truth) per day, shaped as customers()'s; the same arguments give the same
    frames.
    """
    if days < 1 or per_day < 2:
        raise ValueError(f"days must be at least 1 and per_day at least 2, got {days}, {per_day}")
    first, _truth, people, used = _customers(n_people, seed)
    rng = np.random.default_rng([seed, 2])  # a stream of its own: the first table stays as it is
    width = max(5, len(str(n_people)))
    owners = [f"P-{i + 1:0{width}d}" for i in range(len(people))]
    next_id = len(first) + 1
    id_width = max(6, len(str(len(first))))
    tables = []
    for _day in range(days):
        rows, who = [], []
        for i in rng.choice(len(people), per_day // 2, replace=False):
            rows.append(_render_record(rng, people[i], dup=True, used=used))
            who.append(owners[i])
        while len(rows) < per_day:
            lang, country = _draw_lang(rng)
            person = _new_person(rng, lang, country, used)
            person.email = _new_email(rng, person, used)
            people.append(person)
            owners.append(f"P-{len(people):0{width}d}")
            for j in range(1 + int(rng.random() < 0.2)):
                rows.append(_render_record(rng, person, dup=j > 0, used=used))
                who.append(owners[-1])
        order = rng.permutation(len(rows))
        ids = [f"C-{next_id + i:0{id_width}d}" for i in range(len(rows))]
        next_id += len(rows)
        records = pd.DataFrame([rows[i] for i in order], columns=CUSTOMER_COLUMNS[1:])
        records.insert(0, "customer_id", ids)
        records = records.astype(pd.StringDtype())
        truth = pd.DataFrame({"customer_id": ids, "person_id": [who[i] for i in order]},
                             dtype="str")
        tables.append((records, truth))
    return tables


def summary(records: pd.DataFrame, truth: pd.DataFrame, id_col: str = "person_id") -> dict:
    """Rows, distinct people, people with duplicates and true duplicate pairs of a generated set."""
    sizes = truth[id_col].value_counts()
    return {
        "rows": len(records),
        "people": int(sizes.size),
        "people_with_duplicates": int((sizes > 1).sum()),
        "duplicate_pairs": int((sizes * (sizes - 1) // 2).sum()),
    }


# --------------------------------------------------------------------------------------------
# persons(): a large, vectorised benchmark table
# --------------------------------------------------------------------------------------------

_PERSON_MAIL_DOMAINS = [
    "gmail.com",
    "hotmail.co.uk",
    "outlook.com",
    "yahoo.co.uk",
    "btinternet.com",
    "icloud.com",
    "sky.com",
    "live.co.uk",
    "aol.com",
    "virginmedia.com",
    "protonmail.com",
]
_PERSON_MAIL_P = np.array([0.35, 0.12, 0.1, 0.1, 0.06, 0.07, 0.05, 0.05, 0.03, 0.04, 0.03])
_N_VARIANTS = 6  # typo variants precomputed per name
_DOB_FIRST = np.datetime64("1935-01-01", "D")
_DOB_LAST = np.datetime64("2006-12-31", "D")
_DOB_DAYS = int((_DOB_LAST - _DOB_FIRST).astype(np.int64))


def _surname_pool() -> list[str]:
    real = list(dict.fromkeys(_EN_SURNAMES))
    seen = dict.fromkeys(real)
    built = []
    for head in _EN_SURNAME_HEADS:
        for tail in _EN_SURNAME_TAILS:
            name = head + tail
            if name not in seen:
                seen[name] = None
                built.append(name)
    return real + built


def _with_variants(rng: np.random.Generator, names: list[str]) -> list[str]:
    """Names followed by `_N_VARIANTS` typo variants of each (name i's are at n + i*V + v)."""
    return names + [_en_typo(rng, name) for name in names for _ in range(_N_VARIANTS)]


def _take(pool: Sequence[str], codes: np.ndarray) -> pd.Series:
    """pool[codes] as a pandas string column: one Arrow take, no Python object per row."""
    return pd.Series(pool, dtype="str").take(codes).reset_index(drop=True)


class _Postcodes:
    """UK postcodes as integer codes (area, district, inward part), turned into text at the end."""

    def __init__(self) -> None:
        town_areas = [t[1].split() for t in _UK_TOWNS]
        self.areas = [a for group in town_areas for a in group]
        self.count = np.array([len(g) for g in town_areas])
        self.start = np.concatenate([[0], np.cumsum(self.count)[:-1]])
        letters = _UK_POSTCODE_LETTERS
        self.inward = [f"{d}{a}{b}" for d in range(1, 10) for a in letters for b in letters]

    def draw(self, rng: np.random.Generator, towns: np.ndarray) -> np.ndarray:
        area = self.start[towns] + (rng.random(towns.size) * self.count[towns]).astype(np.int64)
        district = rng.integers(1, 30, towns.size)
        inward = rng.integers(0, len(self.inward), towns.size)
        return np.stack([area, district, inward], axis=1)

    def text(self, codes: np.ndarray) -> pd.Series:
        districts = [str(i) for i in range(30)]
        return (
            _take(self.areas, codes[:, 0])
            + _take(districts, codes[:, 1])
            + " "
            + _take(self.inward, codes[:, 2])
        )


def _dup_structure(
    rng: np.random.Generator, n_rows: int, dup_rate: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """Entity of each row (shuffled) and whether the row is an extra copy; 1-3 copies each."""
    n_dup = round(n_rows * dup_rate)
    n_ent = n_rows - n_dup
    extra = np.empty(0, dtype=np.int64)
    if n_dup:
        # Draw copy counts until they add up to n_dup exactly; the last one is cut to fit.
        copies = rng.choice([1, 2, 3], size=n_dup, p=[0.6, 0.3, 0.1])
        total = np.cumsum(copies)
        k = int(np.searchsorted(total, n_dup))
        copies = copies[: k + 1]
        copies[-1] -= total[k] - n_dup
        owners = rng.choice(n_ent, size=copies.size, replace=copies.size > n_ent)
        extra = np.repeat(owners, copies)
    entity = np.concatenate([np.arange(n_ent), extra])
    is_dup = np.concatenate([np.zeros(n_ent, bool), np.ones(extra.size, bool)])
    order = rng.permutation(n_rows)
    return entity[order], is_dup[order], n_ent


def _person_emails(
    rng: np.random.Generator,
    first: np.ndarray,
    surname: np.ndarray,
    year: np.ndarray,
    first_names: list[str],
    surnames: list[str],
) -> pd.Series:
    """One e-mail per entity from its true name, in six local-part patterns, made unique."""
    n = first.size
    # Pieces: X + sep + Y + tail; X and Y index one pool of first names, initials and surnames.
    lower = (
        [x.lower() for x in first_names]
        + [x[0].lower() for x in first_names]
        + [x.lower() for x in surnames]
    )
    init_off, sur_off = len(first_names), 2 * len(first_names)
    two = [f"{i:02d}" for i in range(100)] + [""]
    pattern = rng.choice(6, n, p=[0.3, 0.15, 0.15, 0.15, 0.15, 0.1])
    # pattern: 0 first.last  1 firstlast  2 flastNN  3 first_lastYY  4 first.lastNN  5 last.first
    x = np.select([pattern == 2, pattern == 5], [init_off + first, sur_off + surname], first)
    y = np.where(pattern == 5, first, sur_off + surname)
    sep = np.array([0, 1, 1, 2, 0, 0])[pattern]
    nn = rng.integers(0, 100, n)
    tail = np.select([(pattern == 2) | (pattern == 4), pattern == 3], [nn, year % 100], 100)
    local = _take(lower, x) + _take([".", "", "_"], sep) + _take(lower, y) + _take(two, tail)
    p = _PERSON_MAIL_P / _PERSON_MAIL_P.sum()
    domain = "@" + _take(_PERSON_MAIL_DOMAINS, rng.choice(len(_PERSON_MAIL_DOMAINS), n, p=p))
    email = local + domain
    three = [f"{i:03d}" for i in range(1000)]
    clash = email.duplicated().to_numpy()
    while clash.any():  # two John Smiths cannot own the same mailbox
        tag = _take(three, rng.integers(0, 1000, int(clash.sum()))).to_numpy()
        email[clash] = local[clash].to_numpy() + tag + domain[clash].to_numpy()
        clash = email.duplicated().to_numpy()
    return email


def persons(
    n_rows: int, seed: int = 42, dup_rate: float = 0.2
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An English-style person table of `n_rows` rows for benchmarks, built with array operations.

    About `dup_rate` of the rows are extra copies (1-3 per duplicated entity) of another row, with
    a typo in a name, a blank field, a shifted or day/month-swapped birth date or another city.
    Returns (records, truth): records has `PERSON_COLUMNS` (strings, missing is NaN); truth has
    `rec_id` and an integer `entity_id`. A million rows take a few seconds.
    """
    if n_rows < 1:
        raise ValueError(f"n_rows must be at least 1, got {n_rows}")
    if not 0.0 <= dup_rate <= 0.5:
        raise ValueError(f"dup_rate must be between 0 and 0.5, got {dup_rate}")
    rng = np.random.default_rng(seed)
    entity, is_dup, n_ent = _dup_structure(rng, n_rows, dup_rate)

    # Pools. First names and the real surnames follow a Zipf-like curve and compound surnames
    # share half the mass, so (first name, surname, birth date) rarely collides between people.
    males, females = list(dict.fromkeys(_EN_MALE)), list(dict.fromkeys(_EN_FEMALE))
    first_names, surnames = males + females, _surname_pool()
    n_first, n_sur, n_real = len(first_names), len(surnames), len(dict.fromkeys(_EN_SURNAMES))
    first_pool = _with_variants(rng, first_names)
    sur_pool = _with_variants(rng, surnames)
    sur_p = np.concatenate([_zipf(n_real, 12.0), rng.lognormal(0.0, 0.7, n_sur - n_real)])
    sur_p[n_real:] *= sur_p[:n_real].sum() / sur_p[n_real:].sum()
    town_p = np.array([t[3] for t in _UK_TOWNS], dtype=float)
    town_p /= town_p.sum()
    postcodes = _Postcodes()

    # Entities.
    male = rng.random(n_ent) < 0.5
    first = np.where(
        male,
        rng.choice(len(males), n_ent, p=_zipf(len(males), 15.0, 0.9)),
        len(males) + rng.choice(len(females), n_ent, p=_zipf(len(females), 15.0, 0.9)),
    )
    surname = rng.choice(n_sur, n_ent, p=sur_p / sur_p.sum())
    dob = rng.integers(0, _DOB_DAYS + 1, n_ent)
    town = rng.choice(len(_UK_TOWNS), n_ent, p=town_p)
    postcode = postcodes.draw(rng, town)
    year = (dob.astype("timedelta64[D]") + _DOB_FIRST).astype("datetime64[Y]").astype(np.int64)
    email = _person_emails(rng, first, surname, year + 1970, first_names, surnames)
    mobile = rng.choice(600_000_000, size=n_ent, replace=False) + 400_000_000  # 07 4xx-9xx

    # Rows: copy the entity's values, then add noise to the extra copies only.
    n = n_rows
    first_row, sur_row = first[entity], surname[entity]
    typo = is_dup & (rng.random(n) < 0.45)
    in_first = rng.random(n) < 0.5
    variant = rng.integers(0, _N_VARIANTS, n)
    first_row = np.where(typo & in_first, n_first + first_row * _N_VARIANTS + variant, first_row)
    sur_row = np.where(typo & ~in_first, n_sur + sur_row * _N_VARIANTS + variant, sur_row)

    days = dob[entity].astype("timedelta64[D]") + _DOB_FIRST
    month_start = days.astype("datetime64[M]")
    year_start = days.astype("datetime64[Y]")
    month = (month_start - year_start.astype("datetime64[M]")).astype(np.int64) + 1
    day = (days - month_start.astype("datetime64[D]")).astype(np.int64) + 1
    swapped = (year_start.astype("datetime64[M]") + (day - 1).astype("timedelta64[M]")).astype(
        "datetime64[D]"
    ) + (month - 1).astype("timedelta64[D]")
    shifted = days + rng.choice([-1, 1], n).astype("timedelta64[D]")
    date_noise = is_dup & (rng.random(n) < 0.15)
    # A day/month swap only reads as a date when the day is 12 or less; else shift by a day.
    use_swap = date_noise & (day <= 12) & (day != month) & (rng.random(n) < 0.4)
    days = np.where(use_swap, swapped, np.where(date_noise & ~use_swap, shifted, days))
    dob_row = (days - _DOB_FIRST).astype(np.int64) + 1  # +1: the date pool starts a day early

    town_row, postcode_row = town[entity], postcode[entity]
    moved = is_dup & (rng.random(n) < 0.1)
    town_row[moved] = rng.choice(len(_UK_TOWNS), int(moved.sum()), p=town_p)
    new_postcode = moved & (rng.random(n) < 0.5)  # half of the movers also update the postcode
    postcode_row[new_postcode] = postcodes.draw(rng, town_row[new_postcode])

    dates = np.datetime_as_string(_DOB_FIRST - 1 + np.arange(_DOB_DAYS + 3), unit="D").tolist()
    three = [f"{i:03d}" for i in range(1000)]
    m = mobile[entity]
    columns = {
        "first_name": _take(first_pool, first_row),
        "surname": _take(sur_pool, sur_row),
        "dob": _take(dates, dob_row),
        "city": _take([t[0] for t in _UK_TOWNS], town_row),
        "postcode": postcodes.text(postcode_row),
        "email": email.take(entity).reset_index(drop=True),
        "phone": "07"
        + _take(three, m // 1_000_000)
        + " "
        + _take(three, m // 1000 % 1000)
        + _take(three, m % 1000),
    }
    blank = is_dup & (rng.random(n) < 0.3)
    blank_field = rng.choice(5, n, p=[0.25, 0.15, 0.2, 0.2, 0.2])
    for k, name in enumerate(["dob", "city", "postcode", "email", "phone"]):
        columns[name] = columns[name].mask(blank & (blank_field == k))

    width = max(7, len(str(n_rows)))
    rec_id = "P" + pd.Series(np.arange(1, n + 1)).astype("str").str.zfill(width)
    records = pd.DataFrame({"rec_id": rec_id, **columns})
    truth = pd.DataFrame({"rec_id": rec_id, "entity_id": entity.astype(np.int64)})
    return records, truth


# --------------------------------------------------------------------------------------------
# traps(): person tables that each hold one trap for zero-configuration linkage (issue 14)
# --------------------------------------------------------------------------------------------

# Each trap and whether its table is deduplicated (one frame) or linked (two frames).
TRAPS = {
    "persons": "dedupe",  # the plain generator: the scale trap (same F1 at 100k and 1M)
    "split_dates": "dedupe",  # birth date in year, month and day columns; no e-mail, phone
    "households": "dedupe",  # people of one household share surname, address and city
    "link_columns": "link",  # columns on one side only, the same field under another name
    "sparse": "dedupe",  # mostly-empty columns
    "numeric_codes": "dedupe",  # a categorical code, a row number, a stale group label
    "foreign_phones": "dedupe",  # names, birth date and phones of five countries, each in
    # national, international or E.164 form, and the country
    "all": "dedupe",  # households with every dedupe trap above at once
}

# (region, calling code, weight): the mobile numbers traps() writes; all pass phonenumbers'
# is_valid_number in E.164 form.
_TRAP_PHONE_REGIONS = [("GB", "44", 0.3), ("US", "1", 0.25), ("KR", "82", 0.15),
                       ("DE", "49", 0.15), ("FR", "33", 0.15)]
_US_AREAS = [212, 415, 617, 312, 206, 512, 303, 503, 404, 646, 213, 720]


def _digit_text(values: np.ndarray, width: int) -> pd.Series:
    """Non-negative integers as zero-padded text, vectorised."""
    return pd.Series(values.astype(np.int64), dtype="int64").astype("str").str.zfill(width)


def _trap_phones(rng: np.random.Generator, n_ent: int, entity: np.ndarray) -> pd.DataFrame:
    """A mobile number per entity in one of five countries, each row in a random format.

    Formats: national as dialled at home, international with spaces, E.164. Copies of one
    person pick their format independently, so the same number is often written two ways.
    Returns `phone` (text per row) and `country` (ISO region per row).
    """
    p = np.array([w for _, _, w in _TRAP_PHONE_REGIONS])
    region = rng.choice(len(_TRAP_PHONE_REGIONS), n_ent, p=p / p.sum())
    a = rng.integers(0, 10_000, n_ent)  # four-digit block
    b = rng.integers(0, 10_000, n_ent)  # another four-digit block
    c = rng.integers(0, 100, n_ent)  # two digits
    r, n = region[entity], entity.size
    a4, b4, c2 = _digit_text(a[entity], 4), _digit_text(b[entity], 4), _digit_text(c[entity], 2)
    a2b = a4.str[2:]
    b2, b2b = b4.str[:2], b4.str[2:]
    style = rng.integers(0, 3, n)  # 0 national, 1 international, 2 E.164
    # GB: 07 + 4..9 + 8 digits: 07xxx xxxxxx / +44 7xxx xxxxxx
    gb_head = "7" + _take(list("45789"), a[entity] % 5) + a4.str[2:]  # 076: pagers
    gb_nat, gb_int = "0" + gb_head + " " + b4 + c2, "+44 " + gb_head + " " + b4 + c2
    gb_e164 = "+44" + gb_head + b4 + c2
    # US: area, exchange 200-999, line: (415) 555-1234 / +1 415-555-1234
    area = pd.Series(np.array(_US_AREAS)[a[entity] % len(_US_AREAS)]).astype("str")
    exch = _digit_text(200 + b[entity] % 800, 3)
    line = c2 + a2b
    us_nat, us_int = "(" + area + ") " + exch + "-" + line, "+1 " + area + "-" + exch + "-" + line
    us_e164 = "+1" + area + exch + line
    # KR: 010-xxxx-xxxx
    kr_a = _take(list("2346789"), a[entity] % 7) + a4.str[1:]  # 010-597x..599x are unassigned
    kr_nat, kr_int = "010-" + kr_a + "-" + b4, "+82 10-" + kr_a + "-" + b4
    kr_e164 = "+8210" + kr_a + b4
    # DE: 017x + 8 digits: 0171 23456789 / +49 171 23456789
    de_head = "17" + _digit_text(a[entity] % 10, 1)
    de_rest = b4 + c2 + a2b
    de_nat, de_int, de_e164 = "0" + de_head + " " + de_rest, "+49 " + de_head + " " + de_rest, (
        "+49" + de_head + de_rest)
    # FR: 06 4x-8x xx xx xx / +33 6 xx xx xx xx
    fr = [_digit_text(40 + a[entity] // 100 % 50, 2), a2b, b2, b2b]  # 0639, 069x: not mobile
    fr_nat = "06 " + fr[0] + " " + fr[1] + " " + fr[2] + " " + fr[3]
    fr_int = "+33 6 " + fr[0] + " " + fr[1] + " " + fr[2] + " " + fr[3]
    fr_e164 = "+336" + fr[0] + fr[1] + fr[2] + fr[3]
    table = [[gb_nat, gb_int, gb_e164], [us_nat, us_int, us_e164], [kr_nat, kr_int, kr_e164],
             [de_nat, de_int, de_e164], [fr_nat, fr_int, fr_e164]]
    phone = np.empty(n, dtype=object)
    for k in range(len(table)):
        for s in range(3):
            pick = (r == k) & (style == s)
            phone[pick] = table[k][s].to_numpy()[pick]
    regions = [code for code, _, _ in _TRAP_PHONE_REGIONS]
    return pd.DataFrame({"phone": pd.Series(phone, dtype="str"), "country": _take(regions, r)})


def _split_dates(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Replace an ISO date column by birth_year, birth_month and birth_day number columns."""
    parts = frame[column].str.extract(r"^(\d{4})-(\d{2})-(\d{2})$")
    at = frame.columns.get_loc(column)
    out = frame.drop(columns=[column])
    for k, name in enumerate(["birth_year", "birth_month", "birth_day"]):
        values = parts[k].str.lstrip("0")  # numbers as a spreadsheet would export them
        out.insert(at + k, name, values)
    return out


def _add_sparse(frame: pd.DataFrame, entity: np.ndarray, rng: np.random.Generator) -> None:
    """Add mostly-empty columns in place: a middle name and a title that belong to the person,
    and a fax number and a note that are filled in for a few rows at random."""
    n, n_ent = entity.size, int(entity.max()) + 1
    firsts = list(dict.fromkeys(_EN_MALE + _EN_FEMALE))
    middle = rng.integers(0, len(firsts), n_ent)
    has_middle = rng.random(n_ent) < 0.06
    frame["middle_name"] = _take(firsts, middle[entity]).mask(
        ~(has_middle[entity] & (rng.random(n) < 0.7)))
    titles = ["Dr", "Rev", "Prof", "Sir", "Dame", "Capt"]
    frame["title"] = _take(titles, rng.integers(0, len(titles), n_ent)[entity]).mask(
        ~((rng.random(n_ent) < 0.03)[entity]))
    frame["fax"] = ("01" + _digit_text(rng.integers(0, 1_000_000_000, n), 9)).mask(
        rng.random(n) > 0.01)
    notes = ["call back", "moved", "prefers post", "vip", "complaint 2019", "do not call"]
    frame["notes"] = _take(notes, rng.integers(0, len(notes), n)).mask(rng.random(n) > 0.02)


def _add_codes(frame: pd.DataFrame, entity: np.ndarray, group: pd.Series,
               rng: np.random.Generator) -> None:
    """Add numeric-looking columns in place that must not be compared as evidence of a match:
    `row` (the row number), `branch_code` (a categorical code of 40 three-digit values, one per
    person) and `cluster` (a stale group label from an earlier, coarser grouping: `group`)."""
    n, n_ent = entity.size, int(entity.max()) + 1
    frame.insert(1, "row", pd.Series(np.arange(1, n + 1)).astype("str"))
    codes = np.sort(rng.choice(np.arange(100, 1000), 40, replace=False))
    frame["branch_code"] = _digit_text(codes[rng.integers(0, 40, n_ent)][entity], 3)
    labels = pd.factorize(group)[0]
    frame["cluster"] = pd.Series(rng.permutation(labels.max() + 1)[labels]).astype("str")


def _households(n_rows: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The union of two administrative sources about the people of a town's households.

    People of one household share surname, address, city and postcode and differ in given name,
    sex and birth date. About 85% of the people are in source A and 75% in source B (everyone in
    at least one); B's copy has its own typos, abbreviations, blanks and moves.
    """
    rng = np.random.default_rng(seed)
    n_people = int(n_rows / 1.55) + 10
    sizes = rng.choice([1, 2, 3, 4, 5, 6], n_people, p=[0.28, 0.3, 0.16, 0.16, 0.07, 0.03])
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), n_people)) + 1]
    n_hh = sizes.size
    hh = np.repeat(np.arange(n_hh), sizes)
    n_people = hh.size

    males, females = list(dict.fromkeys(_EN_MALE)), list(dict.fromkeys(_EN_FEMALE))
    first_names, surnames = males + females, _surname_pool()
    n_first, n_sur, n_real = len(first_names), len(surnames), len(dict.fromkeys(_EN_SURNAMES))
    first_pool, sur_pool = _with_variants(rng, first_names), _with_variants(rng, surnames)
    sur_p = np.concatenate([_zipf(n_real, 12.0), rng.lognormal(0.0, 0.7, n_sur - n_real)])
    sur_p[n_real:] *= sur_p[:n_real].sum() / sur_p[n_real:].sum()
    town_p = np.array([t[3] for t in _UK_TOWNS], dtype=float)
    postcodes = _Postcodes()

    # Households.
    surname = rng.choice(n_sur, n_hh, p=sur_p / sur_p.sum())
    town = rng.choice(len(_UK_TOWNS), n_hh, p=town_p / town_p.sum())
    postcode = postcodes.draw(rng, town)
    streets = [f"{s} {x}" for s in _UK_STREETS for x in _UK_SUFFIXES]
    short = [f"{s} {_STREET_ABBREV[x]}" for s in _UK_STREETS for x in _UK_SUFFIXES]
    street = rng.integers(0, len(streets), n_hh)
    number = rng.integers(1, 250, n_hh)

    # People: distinct given names within a household (redrawn where two collide).
    male = rng.random(n_people) < 0.5
    p_m, p_f = _zipf(len(males), 15.0, 0.9), _zipf(len(females), 15.0, 0.9)

    def draw(k: np.ndarray) -> np.ndarray:
        return np.where(male[k], rng.choice(len(males), k.size, p=p_m),
                        len(males) + rng.choice(len(females), k.size, p=p_f))

    first = draw(np.arange(n_people))
    for _ in range(5):
        clash = pd.DataFrame({"h": hh, "f": first}).duplicated().to_numpy()
        if not clash.any():
            break
        first[clash] = draw(np.flatnonzero(clash))
    dob = rng.integers(0, _DOB_DAYS + 1, n_people)

    # Rows: a copy in A and/or B.
    in_a = rng.random(n_people) < 0.85
    in_b = (rng.random(n_people) < 0.75) | ~in_a
    entity = np.concatenate([np.flatnonzero(in_a), np.flatnonzero(in_b)])
    from_b = np.concatenate([np.zeros(int(in_a.sum()), bool), np.ones(int(in_b.sum()), bool)])
    order = rng.permutation(entity.size)[:n_rows]
    entity, from_b = entity[order], from_b[order]
    n = entity.size
    house = hh[entity]

    first_row, sur_row = first[entity], surname[house]
    typo_first = from_b & (rng.random(n) < 0.1)
    typo_sur = from_b & (rng.random(n) < 0.05)
    variant = rng.integers(0, _N_VARIANTS, n)
    first_row = np.where(typo_first, n_first + first_row * _N_VARIANTS + variant, first_row)
    sur_row = np.where(typo_sur, n_sur + sur_row * _N_VARIANTS + variant, sur_row)
    days = dob[entity] + np.where(from_b & (rng.random(n) < 0.05), rng.choice([-1, 1], n), 0)
    days = np.clip(days, 0, _DOB_DAYS) + 1
    dates = np.datetime_as_string(_DOB_FIRST - 1 + np.arange(_DOB_DAYS + 3), unit="D").tolist()

    town_row, postcode_row = town[house], postcode[house]
    street_row, number_row = street[house], number[house]
    moved = from_b & (rng.random(n) < 0.05)
    k = int(moved.sum())
    town_row[moved] = rng.choice(len(_UK_TOWNS), k, p=town_p / town_p.sum())
    postcode_row[moved] = postcodes.draw(rng, town_row[moved])
    street_row[moved] = rng.integers(0, len(streets), k)
    number_row[moved] = rng.integers(1, 250, k)
    abbreviate = from_b & (rng.random(n) < 0.4)
    address = (pd.Series(number_row).astype("str") + " "
               + _take(streets, street_row).where(~abbreviate, _take(short, street_row)))
    columns = {
        "source": _take(["A", "B"], from_b.astype(np.int64)),
        "first_name": _take(first_pool, first_row),
        "surname": _take(sur_pool, sur_row),
        "dob": _take(dates, days),
        "sex": _take(["F", "M"], male[entity].astype(np.int64)),
        "address": address,
        "city": _take([t[0] for t in _UK_TOWNS], town_row),
        "postcode": postcodes.text(postcode_row),
    }
    blank = from_b & (rng.random(n) < 0.1)
    blank_field = rng.integers(0, 3, n)
    for j, name in enumerate(["dob", "address", "postcode"]):
        columns[name] = columns[name].mask(blank & (blank_field == j))
    width = max(7, len(str(n)))
    rec_id = "H" + pd.Series(rng.permutation(n) + 1).astype("str").str.zfill(width)
    records = pd.DataFrame({"rec_id": rec_id, **columns})
    truth = pd.DataFrame({"rec_id": rec_id, "entity_id": entity.astype(np.int64)})
    return records, truth


def _link_columns(n_rows: int, seed: int) -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """Two person tables to link whose columns differ: the left has e-mail, the right phone,
    and the right names its shared fields differently and in another order."""
    records, truth = persons(n_rows, seed=seed, dup_rate=0.3)
    rng = np.random.default_rng(seed + 1)
    entity = truth["entity_id"].to_numpy()
    copy = pd.Series(entity).groupby(entity).cumcount().to_numpy()
    single = ~pd.Series(entity).duplicated(keep=False).to_numpy()
    coin = rng.random(entity.size) < 0.5
    left = ((copy == 0) & ~single) | (single & coin)
    right = (copy == 1) | (single & ~coin)
    a = records[left].drop(columns=["phone"]).reset_index(drop=True)
    b = records[right].drop(columns=["email"]).reset_index(drop=True)
    b = b.rename(columns={"rec_id": "id", "first_name": "given_name", "surname": "family_name",
                          "dob": "birth_date", "city": "town", "postcode": "post_code",
                          "phone": "mobile"})
    b["id"] = "R" + b["id"].str[1:]
    b = b[["id", "family_name", "given_name", "mobile", "post_code", "town", "birth_date"]]
    pairs = pd.DataFrame({"id_l": a["rec_id"], "e": entity[left]}).merge(
        pd.DataFrame({"id_r": b["id"], "e": entity[right]}), on="e")
    return [a, b], pairs[["id_l", "id_r"]].sort_values("id_l").reset_index(drop=True)


def traps(
    n_rows: int, seed: int = 42, trap: str = "all"
) -> tuple[str, list[pd.DataFrame], pd.DataFrame]:
    """A person table of about `n_rows` rows that holds one trap for zero-configuration linkage.

    `trap` is a key of `TRAPS`. Returns (mode, frames, truth): mode is "dedupe" or "link";
    frames holds one table (dedupe) or two (link, `n_rows` over both); truth has the id column
    and `entity_id` per row (dedupe) or the matching pairs `id_l`, `id_r` (link). The truth is
    for scoring only. Built with array operations: a million rows take seconds.
    """
    if trap not in TRAPS:
        raise ValueError(f"unknown trap {trap!r}; one of {', '.join(TRAPS)}")
    if n_rows < 10:
        raise ValueError(f"n_rows must be at least 10, got {n_rows}")
    if trap == "link_columns":
        frames, pairs = _link_columns(n_rows, seed)
        return "link", frames, pairs
    if trap == "households" or trap == "all":
        records, truth = _households(n_rows, seed)
    else:
        records, truth = persons(n_rows, seed=seed)
    rng = np.random.default_rng(seed + 7)
    entity = truth["entity_id"].to_numpy()
    if trap in ("split_dates", "all"):
        records = _split_dates(records, "dob")
    if trap == "split_dates":  # an administrative person table: the birth date must count
        records = records.drop(columns=["email", "phone"])
    if trap in ("sparse", "all"):
        _add_sparse(records, entity, rng)
        if "email" in records:
            records["email"] = records["email"].mask(rng.random(entity.size) > 0.1)
    if trap in ("numeric_codes", "all"):
        city = records["city"] if "city" in records else pd.Series([""] * entity.size)
        # The stale label: an earlier grouping of one person's surname and town, so namesakes
        # in one town share it and a copy with a typo or a move does not.
        first_copy = pd.Series(np.arange(entity.size)).groupby(entity).transform("first")
        group = (records["surname"].take(first_copy).to_numpy().astype(str) + "|"
                 + city.take(first_copy).to_numpy().astype(str))
        _add_codes(records, entity, pd.Series(group), rng)
    if trap in ("foreign_phones", "all"):
        phones = _trap_phones(rng, int(entity.max()) + 1, entity)
        gone = ["email", "phone"] + (["city", "postcode"] if trap == "foreign_phones" else [])
        records = records.drop(columns=[c for c in gone if c in records])
        records["phone"] = phones["phone"].mask(rng.random(entity.size) < 0.05)
        records["country"] = phones["country"]
    return "dedupe", [records], truth


# --------------------------------------------------------------------------------------------
# transactions(): purchases without a transaction id
# --------------------------------------------------------------------------------------------

TRANSACTION_COLUMNS = [
    "txn_row",
    "customer_id",
    "product",
    "amount",
    "purchase_date",
    "store",
    "ingest_batch",
    "load_ts",
    "source",
]
# The business columns: two rows that agree on all of them look like the same purchase.
TRANSACTION_KEY = ["customer_id", "product", "amount", "purchase_date", "store"]

# product, price in won, price in pence (London Bridge), weight, bought twice a day at times
_PRODUCTS = [
    ("아메리카노", 4500, 350, 14, True),
    ("Americano", 4500, 350, 8, True),
    ("카페라떼", 5000, 395, 9, True),
    ("Latte", 5000, 395, 8, True),
    ("Cold Brew", 5500, 425, 5, True),
    ("녹차라떼", 5500, 425, 4, True),
    ("바나나우유", 1800, 150, 5, True),
    ("Iced Tea", 4000, 300, 3, True),
    ("김밥", 3500, 450, 7, True),
    ("참치김밥", 4500, 550, 4, False),
    ("삼각김밥", 1500, 250, 5, True),
    ("떡볶이", 5000, 650, 3, False),
    ("Sandwich", 6500, 495, 5, False),
    ("Croissant", 3800, 295, 4, True),
    ("Bagel", 3500, 275, 3, False),
    ("Muffin", 3900, 295, 3, True),
    ("도시락", 6900, 795, 3, False),
    ("Lunch Box", 12900, 1095, 2, False),
    ("원두 200g", 12900, 999, 1, False),
]
_PRODUCT_P = np.array([p[3] for p in _PRODUCTS]) / sum(p[3] for p in _PRODUCTS)
_REPEATABLE = np.array([p[4] for p in _PRODUCTS])
_LONDON = "London Bridge"
_STORES = ["강남점", "홍대점", "잠실점", "판교점", "Shinchon", "Itaewon", "COEX Mall", _LONDON]
_STORE_P = np.array([0.2, 0.15, 0.13, 0.1, 0.14, 0.1, 0.1, 0.08])
_TXN_SOURCES = ["pos", "app", "web"]
_TXN_SOURCE_P = np.array([0.6, 0.25, 0.15])
_TXN_FIRST_DAY = dt.date(2025, 3, 1)
_TXN_DAYS = 61  # March and April 2025
# Till (pos) rows are loaded in three batches a day, after 11:00, 16:00 and midnight; app and web
# rows stream in a few minutes after the purchase and are batched per source and day.
_POS_WINDOW_ENDS = (11 * 60, 16 * 60, 24 * 60)
# Time slots (minutes after midnight) for purchases of one item on one day: each slot lies in
# its own till window, and slots are at least 1.5 hours apart.
_REPEAT_SLOTS = ((7 * 60, 10 * 60), (11 * 60 + 30, 14 * 60 + 30), (16 * 60 + 30, 21 * 60 + 30))


def _pos_window(minute: int) -> int:
    return next(i for i, end in enumerate(_POS_WINDOW_ENDS) if minute < end)


def transactions(n_customers: int = 300, seed: int = 11) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Purchase rows of a café chain with no transaction id: about 6.8 rows per customer.

    Two kinds of identical-looking rows are mixed in. *Legitimate repeats* (about 10% of the
    purchases): the customer really bought the same item for the same amount on the same day in
    the same store again, so the row agrees with another on `TRANSACTION_KEY`, but it came in
    another ingest batch or was loaded hours apart. *Double loads* (about 8% of the rows): a batch,
    or a slice of it, was loaded twice, so the copy agrees on every column but `txn_row` and has a
    `load_ts` a few seconds later. Returns (records, truth): records has `TRANSACTION_COLUMNS` (all
    text), truth has `txn_row`, `event_id` (one per real purchase) and `kind` (original,
    repeat_purchase or double_load). The same arguments give the same frames.
    """
    if n_customers < 1:
        raise ValueError(f"n_customers must be at least 1, got {n_customers}")
    rng = np.random.default_rng(seed)
    width = max(4, len(str(n_customers)))
    cust_ids = [f"C-{i + 1:0{width}d}" for i in range(n_customers)]
    cust_p = rng.gamma(1.5, size=n_customers)
    cust_p /= cust_p.sum()
    home = rng.choice(len(_STORES), size=n_customers, p=_STORE_P)

    # 1. Distinct purchases: no two agree on the business key.
    n_base = round(n_customers * 5.6)
    keys: set[tuple] = set()
    base: list[dict[str, Any]] = []
    while len(base) < n_base:
        c = int(rng.choice(n_customers, p=cust_p))
        store = int(home[c])
        if _STORES[store] != _LONDON and rng.random() < 0.25:
            store = int(rng.choice(len(_STORES) - 1, p=_STORE_P[:-1] / _STORE_P[:-1].sum()))
        product = int(rng.choice(len(_PRODUCTS), p=_PRODUCT_P))
        qty = int(rng.choice([1, 2, 3], p=[0.86, 0.11, 0.03]))
        price = _PRODUCTS[product][2 if _STORES[store] == _LONDON else 1]
        day = _TXN_FIRST_DAY + dt.timedelta(days=int(rng.integers(_TXN_DAYS)))
        key = (c, product, qty * price, day, store)
        if key in keys:
            continue
        keys.add(key)
        source = str(rng.choice(_TXN_SOURCES, p=_TXN_SOURCE_P))
        minute = int(rng.integers(7 * 60, 22 * 60))
        base.append({"key": key, "source": source, "minute": minute, "kind": "original"})

    # 2. Legitimate repeats: the same purchase again, later (or earlier) the same day.
    purchases = list(base)
    n_repeats = round(n_base / 9)  # so that repeats are 10% of all purchases
    candidates = [i for i, b in enumerate(base) if _REPEATABLE[b["key"][1]]]
    made = 0
    for i in rng.permutation(candidates):
        if made >= n_repeats:
            break
        extra = min(n_repeats - made, 1 if rng.random() < 0.85 else 2)
        slots = sorted(rng.choice(3, size=extra + 1, replace=False))
        minutes = [int(rng.integers(*_REPEAT_SLOTS[s])) for s in slots]
        original = base[int(i)]
        first = int(rng.integers(extra + 1))  # which of the purchases was the first row
        original["minute"] = minutes.pop(first)
        for minute in minutes:
            source = original["source"]
            if rng.random() < 0.3:
                source = str(rng.choice(_TXN_SOURCES, p=_TXN_SOURCE_P))
            purchases.append(
                {"key": original["key"], "source": source, "minute": minute, "kind": "repeat"}
            )
        made += extra

    # 3. Ingest batches and load times.
    batches: dict[tuple, list[int]] = {}
    for j, p in enumerate(purchases):
        day = p["key"][3]
        window = _pos_window(p["minute"]) if p["source"] == "pos" else 0
        batches.setdefault((day, p["source"], window), []).append(j)
    load: dict[int, dt.datetime] = {}
    batch_start: dict[tuple, dt.datetime] = {}
    for bkey, members in batches.items():
        day, source, window = bkey
        midnight = dt.datetime.combine(day, dt.time())
        members.sort(key=lambda j: (purchases[j]["minute"], purchases[j]["key"][0]))
        if source == "pos":
            end = midnight + dt.timedelta(minutes=_POS_WINDOW_ENDS[window])
            start = end + dt.timedelta(seconds=int(rng.integers(3 * 60, 25 * 60)))
            for k, j in enumerate(members):
                load[j] = start + dt.timedelta(seconds=k)
        else:
            for j in members:
                lag = int(rng.integers(60, 10 * 60))
                minute = purchases[j]["minute"]
                load[j] = midnight + dt.timedelta(minutes=minute, seconds=lag)
            start = min(load[j] for j in members)
        batch_start[bkey] = start
    order = sorted(batches, key=lambda b: (batch_start[b], b[1]))
    batch_id = {b: f"B-{i + 1:04d}" for i, b in enumerate(order)}
    rows = []
    for b in order:
        for j in batches[b]:
            c, product, amount, day, store = purchases[j]["key"]
            row = {
                "customer_id": cust_ids[c],
                "product": _PRODUCTS[product][0],
                "amount": str(amount),
                "purchase_date": day.isoformat(),
                "store": _STORES[store],
                "ingest_batch": batch_id[b],
                "load_ts": load[j],
                "source": purchases[j]["source"],
            }
            kind = "original" if purchases[j]["kind"] == "original" else "repeat_purchase"
            rows.append((row, j, kind))

    # 4. Double loads: whole batches or slices of them, loaded again seconds later.
    target = round(0.08 / 0.92 * len(purchases))
    by_batch: dict[str, list[int]] = {}
    for r, (row, _, _) in enumerate(rows):
        by_batch.setdefault(row["ingest_batch"], []).append(r)
    names = sorted(by_batch)
    copies = []
    for b in rng.permutation(len(names)):
        need = target - len(copies)
        if need <= 0:
            break
        members = by_batch[names[int(b)]]
        length = len(members)
        if rng.random() > 0.4 and length > 1:
            length = max(1, round(length * rng.uniform(0.3, 0.7)))
        length = min(length, need)
        first = int(rng.integers(len(members) - length + 1))
        delay = dt.timedelta(seconds=int(rng.integers(1, 5)))
        for r in members[first : first + length]:
            row, j, _ = rows[r]
            copies.append(({**row, "load_ts": row["load_ts"] + delay}, j, "double_load"))
    rows += copies

    # 5. Shuffle and number; one event id per purchase, in order of first appearance.
    rows = [rows[i] for i in rng.permutation(len(rows))]
    width = max(6, len(str(len(rows))))
    ids = [f"T-{i + 1:0{width}d}" for i in range(len(rows))]
    event_of: dict[int, str] = {}
    for _, j, _ in rows:
        event_of.setdefault(j, f"E-{len(event_of) + 1:0{width}d}")
    records = pd.DataFrame([row for row, _, _ in rows])
    records["load_ts"] = [t.isoformat(timespec="seconds") for t in records["load_ts"]]
    records.insert(0, "txn_row", ids)
    records = records[TRANSACTION_COLUMNS].astype(pd.StringDtype())
    truth = pd.DataFrame(
        {
            "txn_row": ids,
            "event_id": [event_of[j] for _, j, _ in rows],
            "kind": [kind for _, _, kind in rows],
        },
        dtype="str",
    )
    return records, truth


# --------------------------------------------------------------------------------------------
# labelled_texts(): a labelled text set to clean before training a model
# --------------------------------------------------------------------------------------------

TEXT_COLUMNS = ["doc_id", "text", "label", "source", "domain"]
TEXT_LABELS = ["positive", "negative", "neutral"]

_KO_PRODUCTS = _words(
    """
이어폰 운동화 텀블러 전기포트 가습기 백팩 선크림 쿠션 에어프라이어 보조배터리 키보드 청소기
무선마우스 책상조명 블루투스스피커 노트북거치대 캠핑의자 전기장판 요가매트 샴푸
"""
)
_KO_ASPECTS = _words("배송 포장 가격 품질 디자인 사이즈 색상 소리 냄새 마감 내구성 구성품")
_KO_PREDICATES = {
    "positive": _words("마음에_들어요 좋아요 만족스러워요 훌륭해요 기대_이상이에요 최고예요"),
    "negative": _words("별로예요 실망스러워요 최악이에요 기대_이하예요 설명과_달라요 엉망이에요"),
    "neutral": _words("보통이에요 무난해요 평범해요 그저_그래요 가격만큼은_해요 예상한_정도예요"),
}
_KO_ADVERBS = {
    "positive": ["", "정말 ", "진짜 ", "너무 ", "꽤 "],
    "negative": ["", "정말 ", "너무 ", "좀 "],
    "neutral": ["", "그냥 ", "대체로 "],
}
_EN_PRODUCTS = [
    "earphones",
    "running shoes",
    "tumbler",
    "kettle",
    "humidifier",
    "backpack",
    "sunscreen",
    "air fryer",
    "power bank",
    "keyboard",
    "vacuum cleaner",
    "wireless mouse",
    "desk lamp",
    "speaker",
    "laptop stand",
    "camping chair",
    "yoga mat",
    "shampoo",
]
_EN_ASPECTS = [
    "delivery",
    "packaging",
    "price",
    "build quality",
    "design",
    "size",
    "colour",
    "sound",
    "smell",
    "battery life",
    "finish",
    "manual",
]
_EN_PREDICATES = {
    "positive": ["great", "excellent", "better than expected", "worth the price", "perfect"],
    "negative": ["terrible", "disappointing", "worse than described", "not worth it", "awful"],
    "neutral": ["okay", "average", "as described", "fine for the price", "nothing special"],
}
_EN_ADVERBS = {
    "positive": ["", "really ", "pretty ", "absolutely "],
    "negative": ["", "really ", "pretty ", "just "],
    "neutral": ["", "mostly ", "basically "],
}
_EN_TAILS = {
    "positive": ["", " Would buy again.", " Recommended."],
    "negative": ["", " I want a refund.", " Never again."],
    "neutral": ["", " It does the job.", " No complaints."],
}
_KO_TICKETS = {
    "positive": ["문제를 빨리 해결해 주셔서 감사합니다.", "교환 처리 친절하게 해주셔서 고마워요."],
    "negative": [
        "배송이 아직 안 왔어요.",
        "환불이 처리되지 않았어요.",
        "파손된 상품이 왔어요.",
        "다른 상품이 배송됐어요.",
    ],
    "neutral": [
        "배송지 변경 가능한가요?",
        "영수증 재발급 부탁드립니다.",
        "결제 수단을 바꾸고 싶어요.",
    ],
}
_EN_TICKETS = {
    "positive": ["thanks for sorting this out so quickly.", "the replacement arrived, thank you."],
    "negative": [
        "the parcel still has not arrived.",
        "my refund has not been processed.",
        "the item arrived broken.",
        "I received the wrong item.",
    ],
    "neutral": [
        "can I change the delivery address?",
        "please send me a copy of the invoice.",
        "how do I change my payment method?",
    ],
}
# Statute-style sentences written for this module, quoted verbatim in many legal documents.
PROTECTED_QUOTES = [
    "개인정보 보호법 제15조에 따라 개인정보처리자는 정보주체의 동의를 받은 경우 "
    "개인정보를 수집할 수 있으며 그 수집 목적의 범위에서 이용할 수 있다.",
    "전자상거래법 제17조에 따라 소비자는 계약내용에 관한 서면을 받은 날부터 "
    "7일 이내에 청약철회를 할 수 있다.",
    "약관규제법 제6조에 따라 신의성실의 원칙을 위반하여 공정성을 잃은 약관 조항은 무효이다.",
    "Under Article 6 of the GDPR, processing is lawful only if and to the extent that at least "
    "one of the listed legal bases applies.",
    "Under Article 17 of the GDPR, the data subject has the right to obtain from the controller "
    "the erasure of personal data concerning him or her without undue delay.",
    "Under Section 75 of the Consumer Credit Act 1974, the creditor is jointly and severally "
    "liable with the supplier for any misrepresentation or breach of contract.",
]
# Word swaps for near-duplicates ("a word changed").
_SWAPS = [
    ("정말", "진짜"),
    ("진짜", "정말"),
    ("너무", "엄청"),
    ("마음에 들어요", "맘에 들어요"),
    ("좋아요", "좋네요"),
    ("별로예요", "별로네요"),
    ("최악이에요", "최악입니다"),
    ("보통이에요", "보통입니다"),
    ("배송", "택배"),
    ("부탁드립니다", "부탁드려요"),
    ("주문번호", "주문 번호"),
    ("really", "very"),
    ("great", "excellent"),
    ("terrible", "awful"),
    ("okay", "ok"),
    ("The ", "This "),
    ("delivery", "shipping"),
    ("price", "cost"),
    ("Order", "Order no."),
]
_TEXT_SOURCES = ["web", "qa", "synthetic", "import"]
_PUNCT_END = re.compile(r"[.!?~]+$")
_NON_WORD = re.compile(r"[^\w\s]")


def normalize_text(text: str) -> str:
    """Lower case, punctuation dropped, runs of white space made one space: the near-dup key."""
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def _subject(word: str) -> str:
    """`word` with the subject particle 이 or 가, as its last syllable needs."""
    last = ord(word[-1]) - 0xAC00
    return word + ("이" if 0 <= last < 11172 and last % 28 else "가")


def _new_text(rng: np.random.Generator) -> tuple[str, str]:
    """One original text and its label."""
    label = str(rng.choice(TEXT_LABELS, p=[0.45, 0.35, 0.2]))
    style = rng.choice(4, p=[0.4, 0.3, 0.15, 0.15])
    if style == 0:
        predicate = _pick(rng, _KO_PREDICATES[label]).replace("_", " ")
        text = (
            f"{_pick(rng, _KO_PRODUCTS)} {_subject(_pick(rng, _KO_ASPECTS))} "
            f"{_pick(rng, _KO_ADVERBS[label])}{predicate}{_pick(rng, ['.', '.', '!', ''])}"
        )
    elif style == 1:
        text = (
            f"The {_pick(rng, _EN_PRODUCTS)} {_pick(rng, _EN_ASPECTS)} is "
            f"{_pick(rng, _EN_ADVERBS[label])}{_pick(rng, _EN_PREDICATES[label])}."
            f"{_pick(rng, _EN_TAILS[label])}"
        )
    elif style == 2:
        text = f"주문번호 {rng.integers(100000, 1000000)} {_pick(rng, _KO_TICKETS[label])}"
    else:
        text = f"Order #{rng.integers(100000, 1000000)}: {_pick(rng, _EN_TICKETS[label])}"
    return text, label


def _safe_variant(rng: np.random.Generator, text: str) -> str:
    """`text` with white space, end punctuation or case changed: `normalize_text` undoes it."""
    for _ in range(20):
        op = rng.integers(3)
        if op == 0:
            words = text.split(" ")
            k = int(rng.integers(len(words)))
            words[k] += " "  # a doubled space, or a trailing one after the last word
            variant = " ".join(words)
        elif op == 1:
            variant = _PUNCT_END.sub("", text) + _pick(rng, [".", "!", "!!", "...", ""])
        else:
            variant = text.lower() if rng.random() < 0.7 else text.upper()
        if variant != text:
            return variant
    return text + " "


def _near_variant(rng: np.random.Generator, text: str) -> str:
    """`text` with a white space, punctuation or case change, a spacing slip, or a word swapped."""
    if rng.random() < 0.6:
        return _safe_variant(rng, text)
    swaps = [(a, b) for a, b in _SWAPS if a in text]
    if swaps and rng.random() < 0.8:
        a, b = swaps[int(rng.integers(len(swaps)))]
        return text.replace(a, b, 1)
    words = text.split(" ")
    if len(words) > 2:  # a spacing slip: two words run together
        k = int(rng.integers(len(words) - 1))
        return " ".join([*words[:k], words[k] + words[k + 1], *words[k + 2 :]])
    return ("정말 " if re.search("[가-힣]", text) else "Honestly, ") + text


def labelled_texts(n: int = 1500, seed: int = 13) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A labelled Korean/English text set (reviews and support tickets) with the usual dirt.

    About 10% of the rows are exact duplicates (same text and label), 10% near-duplicates (white
    space, punctuation or case changed, or a word changed; same label), about 5% sit in groups of
    2-3 rows whose texts normalize the same (`normalize_text`) but whose labels disagree, and a few
    statute sentences (`PROTECTED_QUOTES`, domain `legal`) are quoted verbatim by 6-13 documents
    each; those repeats are wanted and must survive cleaning. Returns (records, truth): records
    has `TEXT_COLUMNS` (all text), truth has `doc_id`, `text_group` (same id, same underlying
    text) and `kind` (original, exact_duplicate, near_duplicate, conflicting_label or
    protected_quote). The same arguments give the same frames.
    """
    if n < 100:
        raise ValueError(f"n must be at least 100, got {n}")
    rng = np.random.default_rng(seed)
    quote_counts = rng.integers(6, 14, size=len(PROTECTED_QUOTES))
    n_exact = round(0.1 * n)
    n_near = round(0.1 * n)
    conflict_sizes: list[int] = []
    while sum(conflict_sizes) < round(0.05 * n) - 1:
        conflict_sizes.append(int(rng.choice([2, 3], p=[0.6, 0.4])))
    n_original = n - n_exact - n_near - sum(conflict_sizes) - int(quote_counts.sum())

    group_of_norm: dict[str, int] = {}  # normalized text -> text group, to keep groups apart
    rows: list[tuple[str, str, str, str, int, str]] = []  # text, label, source, domain, group, kind

    def new_group() -> tuple[str, str, int]:
        while True:
            text, label = _new_text(rng)
            if normalize_text(text) not in group_of_norm:
                group = len(group_of_norm)
                group_of_norm[normalize_text(text)] = group
                return text, label, group

    def source(p: list[float]) -> str:
        return str(rng.choice(_TEXT_SOURCES, p=p))

    originals = []
    for _ in range(n_original):
        text, label, group = new_group()
        originals.append((text, label, group))
        rows.append((text, label, source([0.5, 0.2, 0.15, 0.15]), "general", group, "original"))
    for i in rng.integers(len(originals), size=n_exact):
        text, label, group = originals[int(i)]
        kind = "exact_duplicate"
        rows.append((text, label, source([0.3, 0.1, 0.2, 0.4]), "general", group, kind))
    made = 0
    while made < n_near:
        text, label, group = originals[int(rng.integers(len(originals)))]
        variant = _near_variant(rng, text)
        owner = group_of_norm.setdefault(normalize_text(variant), group)
        if variant == text or owner != group:
            continue
        kind = "near_duplicate"
        rows.append((variant, label, source([0.3, 0.2, 0.3, 0.2]), "general", group, kind))
        made += 1
    for size in conflict_sizes:
        text, label, group = new_group()
        others = [x for x in TEXT_LABELS if x != label]
        labels = [label, _pick(rng, others), _pick(rng, TEXT_LABELS)][:size]
        for k, lab in enumerate(labels):
            variant = text if k == 0 or rng.random() < 0.5 else _safe_variant(rng, text)
            kind = "conflicting_label"
            rows.append((variant, lab, source([0.3, 0.3, 0.2, 0.2]), "general", group, kind))
    for quote, count in zip(PROTECTED_QUOTES, quote_counts, strict=True):
        group = group_of_norm.setdefault(normalize_text(quote), len(group_of_norm))
        for _ in range(int(count)):
            kind = "protected_quote"
            rows.append((quote, "neutral", source([0.4, 0.2, 0.1, 0.3]), "legal", group, kind))

    rows = [rows[i] for i in rng.permutation(len(rows))]
    width = max(6, len(str(len(rows))))
    ids = [f"D-{i + 1:0{width}d}" for i in range(len(rows))]
    names: dict[int, str] = {}
    for row in rows:
        names.setdefault(row[4], f"G-{len(names) + 1:05d}")
    records = pd.DataFrame(
        {
            "doc_id": ids,
            "text": [r[0] for r in rows],
            "label": [r[1] for r in rows],
            "source": [r[2] for r in rows],
            "domain": [r[3] for r in rows],
        }
    ).astype(pd.StringDtype())
    truth = pd.DataFrame(
        {"doc_id": ids, "text_group": [names[r[4]] for r in rows], "kind": [r[5] for r in rows]},
        dtype="str",
    )
    return records, truth


# --------------------------------------------------------------------------------------------
# Files and command line
# --------------------------------------------------------------------------------------------


def csv_text(frame: pd.DataFrame) -> str:
    """The exact CSV text written for the sample data: header, no index, "\\n" line ends."""
    return frame.to_csv(index=False, lineterminator="\n")


def write_customers(
    out_dir: str | Path, n_people: int = 1400, seed: int = 7
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write customers.csv and customers_truth.csv (UTF-8) into `out_dir`; return both frames."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records, truth = customers(n_people=n_people, seed=seed)
    for name, frame in (("customers.csv", records), ("customers_truth.csv", truth)):
        # newline="" keeps "\n" line ends on Windows too, so the files stay byte-identical.
        (out / name).write_text(csv_text(frame), encoding="utf-8", newline="")
    return records, truth


def _write_pair(out_dir: str | Path, stem: str, records: pd.DataFrame, truth: pd.DataFrame) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in ((f"{stem}.csv", records), (f"{stem}_truth.csv", truth)):
        (out / name).write_text(csv_text(frame), encoding="utf-8", newline="")


def write_transactions(
    out_dir: str | Path, n_customers: int = 300, seed: int = 11
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write transactions.csv and transactions_truth.csv into `out_dir`; return both frames."""
    records, truth = transactions(n_customers=n_customers, seed=seed)
    _write_pair(out_dir, "transactions", records, truth)
    return records, truth


def write_labelled_texts(
    out_dir: str | Path, n: int = 1500, seed: int = 13
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write labelled_text.csv and labelled_text_truth.csv into `out_dir`; return both frames."""
    records, truth = labelled_texts(n=n, seed=seed)
    _write_pair(out_dir, "labelled_text", records, truth)
    return records, truth


def write_customer_updates(
    out_dir: str | Path, days: int = 2, per_day: int = 150, n_people: int = 1400, seed: int = 7
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """Write customers_day2.csv, customers_day3.csv ... (each with its *_truth.csv): the loads
    that follow customers.csv (`customer_updates`); return the frames."""
    tables = customer_updates(days, per_day, n_people=n_people, seed=seed)
    for day, (records, truth) in enumerate(tables, start=2):
        _write_pair(out_dir, f"customers_day{day}", records, truth)
    return tables


def write_link(out_dir: str | Path, n_rows: int = 600, seed: int = 42) -> None:
    """Write link_left.csv and link_right.csv, two person tables to link whose columns differ
    (`traps(trap="link_columns")`), and link_truth.csv: every record of both (`record_id`,
    the left ids `P...` and the right ids `R...` apart) with its `entity_id`."""
    _mode, (left, right), pairs = traps(n_rows, seed=seed, trap="link_columns")
    entity = dict(zip(pairs["id_r"], pairs["id_l"], strict=True))
    ids = pd.concat([left["rec_id"], right["id"]], ignore_index=True)
    owner = ids.map(lambda i: entity.get(i, i))
    number = pd.Series(pd.factorize(owner)[0] + 1)
    truth = pd.DataFrame({"record_id": ids, "entity_id": number.map("E-{:04d}".format)})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in (("link_left.csv", left), ("link_right.csv", right),
                        ("link_truth.csv", truth)):
        (out / name).write_text(csv_text(frame), encoding="utf-8", newline="")


def write_households(out_dir: str | Path, n_rows: int = 500, seed: int = 42) -> None:
    """Write households.csv and households_truth.csv: people of one household share surname,
    address and city (`traps(trap="households")`)."""
    _mode, (records,), truth = traps(n_rows, seed=seed, trap="households")
    _write_pair(out_dir, "households", records, truth)


def answer(todo: str | Path, truth: str | Path, out: str | Path | None = None) -> pd.DataFrame:
    """Play the person who labels: fill the `label` column of a `linkage sample` file (1 when
    `id_l` and `id_r` are the same entity in `truth`, else 0) and write it back (or to `out`).

    `truth` is a CSV of record id (first column) and entity (second), as the samples' *_truth.csv
    files. Only for trying the labelling loop on the samples: a run never reads a truth file.
    """
    pairs = pd.read_csv(todo, dtype=str, keep_default_na=False)
    table = pd.read_csv(truth, dtype=str, keep_default_na=False)
    entity = dict(zip(table.iloc[:, 0], table.iloc[:, 1], strict=True))
    missing = sorted({*pairs["id_l"], *pairs["id_r"]} - entity.keys())
    if missing:
        raise ValueError(f"{truth} has no entity for {len(missing)} id(s) of {todo}, e.g. "
                         f"{missing[0]!r}: is it the truth of the table that run read?")
    same = [entity[a] == entity[b] for a, b in zip(pairs["id_l"], pairs["id_r"], strict=True)]
    pairs["label"] = ["1" if s else "0" for s in same]
    Path(out or todo).write_text(csv_text(pairs), encoding="utf-8", newline="")
    return pairs


DATASETS = ("customers", "transactions", "texts", "updates", "link", "households")


def _answer_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m linkage.synth answer",
        description="Fill the `label` column of a `linkage sample` CSV from a sample's truth "
        "file (1 same entity, 0 not), in place of a person: for trying the labelling loop.",
    )
    parser.add_argument("todo", help="the CSV `linkage sample` wrote (id_l, id_r, label, ...)")
    parser.add_argument("--truth", required=True,
                        help="record id and entity, e.g. sample_data/customers_truth.csv")
    parser.add_argument("--out", default=None, help="write here instead of over TODO")
    args = parser.parse_args(argv)
    try:
        pairs = answer(args.todo, args.truth, args.out)
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    matches = int((pairs["label"] == "1").sum())
    print(f"labelled {len(pairs)} pairs in {args.out or args.todo} from {args.truth}: "
          f"{matches} same, {len(pairs) - matches} different")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["answer"]:
        return _answer_main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m linkage.synth",
        description="Write the synthetic samples: customers.csv (and the later loads "
        "customers_day2.csv, customers_day3.csv), transactions.csv, labelled_text.csv, "
        "households.csv, each with a *_truth.csv, and link_left.csv, link_right.csv with "
        "link_truth.csv. `python -m linkage.synth answer TODO --truth FILE` fills a "
        "`linkage sample` file's labels from a truth file.",
    )
    parser.add_argument("--out", default="sample_data", help="output folder (default: %(default)s)")
    parser.add_argument(
        "--dataset",
        choices=[*DATASETS, "all"],
        default="all",
        help="which sample to write (default: %(default)s)",
    )
    parser.add_argument("--people", type=int, default=1400, help="distinct people (default: 1400)")
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="random seed (default: 7 for customers and updates, 11 for transactions, 13 for "
        "texts, 42 for link and households)",
    )
    args = parser.parse_args(argv)
    chosen = DATASETS if args.dataset == "all" else (args.dataset,)
    if "customers" in chosen:
        seed = 7 if args.seed is None else args.seed
        records, truth = write_customers(args.out, n_people=args.people, seed=seed)
        facts = ", ".join(f"{k} {v}" for k, v in summary(records, truth).items())
        print(f"wrote customers.csv and customers_truth.csv to {args.out}: {facts}")
    if "transactions" in chosen:
        seed = 11 if args.seed is None else args.seed
        records, truth = write_transactions(args.out, seed=seed)
        kinds = ", ".join(f"{k} {v}" for k, v in truth["kind"].value_counts().items())
        print(f"wrote transactions.csv and transactions_truth.csv to {args.out}: {kinds}")
    if "texts" in chosen:
        seed = 13 if args.seed is None else args.seed
        records, truth = write_labelled_texts(args.out, seed=seed)
        kinds = ", ".join(f"{k} {v}" for k, v in truth["kind"].value_counts().items())
        print(f"wrote labelled_text.csv and labelled_text_truth.csv to {args.out}: {kinds}")
    if "updates" in chosen:
        seed = 7 if args.seed is None else args.seed
        tables = write_customer_updates(args.out, n_people=args.people, seed=seed)
        rows = ", ".join(f"day {d} {len(r)} rows" for d, (r, _t) in enumerate(tables, start=2))
        print(f"wrote customers_day2.csv, customers_day3.csv and their truth to {args.out}: "
              f"{rows}")
    if "link" in chosen:
        write_link(args.out, seed=42 if args.seed is None else args.seed)
        print(f"wrote link_left.csv, link_right.csv and link_truth.csv to {args.out}")
    if "households" in chosen:
        write_households(args.out, seed=42 if args.seed is None else args.seed)
        print(f"wrote households.csv and households_truth.csv to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
